"""The official MCP conformance suite's server scenarios, DuckLM's MCP server under test.

`ducklm serve --port 0` runs as a real process (a data dir, the scripted model and an API
token of its own) and the suite's `server` command runs once, every scenario in turn,
against its streamable-HTTP `/mcp`; each scenario's checks are then one test case.

Why `/mcp` of `ducklm serve` rather than `ducklm mcp serve`: the suite reaches a server
by URL only, and `ducklm mcp serve` speaks stdio. Beside a running `ducklm serve` it only
relays to this same `/mcp`, and alone it serves the same `build_server` over stdio; so
`/mcp` is that server with no test-only relay in between. The token goes the way an MCP
client sends it, a bearer header on every request (`tests/mcp_conformance/
bearer-token.mjs`: the suite has no header option), and DuckLM's own Host and Origin
guard stands in front, which `dns-rebinding-protection` checks for real.

A scenario applies and passes (`PASSING`: a check succeeds and none fails), or does not
apply (`NOT_APPLICABLE`: it calls the suite's own test tools, resources or prompts, which
a server implements for the suite; skipped with the reason), or applies and fails yet
(`NOT_YET`, a strict xfail: the fix that makes one pass fails it until the entry goes).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from tests.support.cli import serving
from tests.support.conformance import (
    BEARER_TOKEN,
    ROOT,
    SUITE_TIMEOUT_S,
    Check,
    checks_by_scenario,
    failures,
    listed_scenarios,
    require_suite,
    suite_command,
    suite_env,
)
from tests.support.scripted_llm import ScriptedLLM

SERVE_START_S = 120  # `ducklm serve` loads LangGraph and the stores first: slow on 2 busy cores

PASSING = (
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",  # the conversations (none yet: an empty, well-formed list)
    "completion-complete",  # a prompt argument: no values (DuckLM completes thread ids)
    "logging-set-level",
    "dns-rebinding-protection",  # GuardMiddleware: a foreign Host is a 400
)
SUITE_TOOL = "calls the suite's own test tool {}; DuckLM's tools are chat, chat_status, "
SUITE_TOOL += "memory_search and memory_add"
SUITE_RESOURCE = "reads the suite's own test resource {}; DuckLM's are its conversations "
SUITE_RESOURCE += "(read in test_mcp_serve)"
SUITE_PROMPT = "gets the suite's own test prompt {}; DuckLM has no prompts"
STATELESS = "/mcp is stateless (no MCP session id: a long-lived server keeps no sessions, "
STATELESS += "decisions.md), and {}"
NOT_APPLICABLE = {
    "tools-call-simple-text": SUITE_TOOL.format("test_simple_text"),
    "tools-call-image": SUITE_TOOL.format("test_image_content"),
    "tools-call-audio": SUITE_TOOL.format("test_audio_content"),
    "tools-call-embedded-resource": SUITE_TOOL.format("test_embedded_resource"),
    "tools-call-mixed-content": SUITE_TOOL.format("test_multiple_content_types"),
    "tools-call-with-logging": SUITE_TOOL.format("test_tool_with_logging")
    + " (chat logs its steps at info: test_mcp_serve)",
    "tools-call-error": SUITE_TOOL.format("test_error_handling")
    + " (an unknown tool is -32602 as the spec says, a bad argument an isError result)",
    "tools-call-with-progress": SUITE_TOOL.format("test_tool_with_progress")
    + " (chat reports progress: test_mcp_serve)",
    "tools-call-sampling": SUITE_TOOL.format("test_sampling")
    + "; DuckLM never asks its caller to sample",
    "tools-call-elicitation": SUITE_TOOL.format("test_elicitation")
    + "; DuckLM asks its own person, never its caller",
    "elicitation-sep1034-defaults": SUITE_TOOL.format("test_elicitation_sep1034_defaults"),
    "elicitation-sep1330-enums": SUITE_TOOL.format("test_elicitation_sep1330_enums"),
    "json-schema-2020-12": SUITE_TOOL.format("json_schema_2020_12_tool"),
    "server-sse-polling": STATELESS.format(SUITE_TOOL.format("test_reconnection")),
    "server-sse-multiple-streams": STATELESS.format(
        "the scenario needs a session id to open its streams (it only warns, checking nothing)"
    ),
    "resources-read-text": SUITE_RESOURCE.format("test://static-text"),
    "resources-read-binary": SUITE_RESOURCE.format("test://static-binary"),
    "resources-templates-read": SUITE_RESOURCE.format("test://template/{id}/data"),
    "resources-subscribe": STATELESS.format(
        "subscribes to the suite's test://watched-resource; DuckLM offers no subscriptions"
    ),
    "resources-unsubscribe": STATELESS.format(
        "unsubscribes from the suite's test://watched-resource; DuckLM offers no subscriptions"
    ),
    "prompts-list": "DuckLM has no prompts, so it declares no prompts capability and "
    "prompts/list is -32601 (method not found), as the spec has it",
    "prompts-get-simple": SUITE_PROMPT.format("test_simple_prompt"),
    "prompts-get-with-args": SUITE_PROMPT.format("test_prompt_with_arguments"),
    "prompts-get-embedded-resource": SUITE_PROMPT.format("test_prompt_with_embedded_resource"),
    "prompts-get-with-image": SUITE_PROMPT.format("test_prompt_with_image"),
}
NOT_YET: dict[str, str] = {}  # every scenario that applies passes today


@dataclass(frozen=True)
class SuiteRun:
    """One run of every server scenario: their checks by name, and what the suite said."""

    checks: dict[str, list[Check]]
    said: str


@pytest.fixture(scope="module")
def installed() -> None:
    """The suite is installed (checked here, off any event loop: it reads the disk)."""
    require_suite()


@pytest.fixture(scope="module")
def model_server() -> Iterator[ScriptedLLM]:
    """The scripted model `ducklm serve` is pointed at (no scenario runs a turn)."""
    with ScriptedLLM() as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def suite_run(
    installed: None, model_server: ScriptedLLM, tmp_path_factory: pytest.TempPathFactory
) -> SuiteRun:
    """`ducklm serve` started, every server scenario run against its `/mcp`, then stopped."""
    root = tmp_path_factory.mktemp("mcp-server-conformance")
    token = secrets.token_urlsafe(32)
    env = await asyncio.to_thread(_serve_env, root, model_server, token)
    async with serving(env, root, limit_s=SERVE_START_S) as (url, _):
        said = await _run_suite(f"{url}/mcp", token, root / "results")
    checks = await asyncio.to_thread(checks_by_scenario, root / "results")
    return SuiteRun(checks, said)


def _serve_env(root: Path, llm: ScriptedLLM, token: str) -> dict[str, str]:
    """`ducklm serve`'s environment: its files under `root`, our model, its token."""
    (root / "workspace").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUCK_")}
    return env | {
        "DUCK_DATA_DIR": str(root / "data"),
        "DUCK_WORKSPACE": str(root / "workspace"),
        "DUCK_LLM_BASE_URL": llm.base_url,
        "DUCK_EMBEDDINGS_URL": llm.base_url,
        "DUCK_API_TOKEN": token,
    }


async def _run_suite(url: str, token: str, out: Path) -> str:
    """Every server scenario (`--suite all`) against `url`; what the suite printed."""
    command = suite_command(
        "server", "--url", url, "--suite", "all", "-o", str(out), preload=BEARER_TOKEN
    )
    env = suite_env() | {"MCP_SERVER_URL": url, "MCP_BEARER_TOKEN": token}
    suite = await asyncio.create_subprocess_exec(
        *command,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    printed, _ = await asyncio.wait_for(suite.communicate(), SUITE_TIMEOUT_S)
    # It exits 1 when a scenario fails; which ones is read from their checks.
    return printed.decode(errors="replace")


def _case(scenario: str) -> object:
    if scenario in NOT_APPLICABLE:
        return pytest.param(scenario, marks=pytest.mark.skip(reason=NOT_APPLICABLE[scenario]))
    if scenario in NOT_YET:
        xfail = pytest.mark.xfail(strict=True, reason=NOT_YET[scenario])
        return pytest.param(scenario, marks=xfail)
    return scenario


@pytest.mark.slow
@pytest.mark.parametrize("scenario", [_case(s) for s in (*PASSING, *NOT_YET, *NOT_APPLICABLE)])
def test_server_scenario(scenario: str, suite_run: SuiteRun) -> None:
    checks = suite_run.checks.get(scenario)
    assert checks is not None, f"the suite ran no {scenario!r}:\n{suite_run.said[-4000:]}"
    failed = failures(checks)
    assert not failed, json.dumps(failed, indent=1)[:4000]
    assert any(c["status"] == "SUCCESS" for c in checks), f"no check succeeded: {checks}"


def test_every_server_scenario_is_listed(installed: None) -> None:
    listed = [*PASSING, *NOT_YET, *NOT_APPLICABLE]
    assert len(listed) == len(set(listed)), "a scenario is in two lists"
    assert listed_scenarios("Server") == set(listed)
