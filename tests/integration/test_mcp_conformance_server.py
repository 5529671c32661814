"""The official MCP conformance suite's server scenarios, DuckLM's MCP server under test.

`ducklm serve --port 0` runs as a real process (a data dir, the scripted model and an API
token of its own) and the suite runs the two frozen requirement sets at once against its
streamable-HTTP `/mcp`: 2025-11-25 (the `initialize` handshake, a session) and
2026-07-28 (stateless, `server/discover`, metadata on each request), each at its own
wire; each scenario's checks are then one test case per revision.

The token goes the way an MCP client sends it, a bearer header on every request
(`tests/mcp_conformance/bearer-token.mjs`: the suite has no header option), and DuckLM's
own Host and Origin guard stands in front, which `dns-rebinding-protection` checks for
real.

The same sets then run against `ducklm mcp serve` (stdio), through a stdio-to-HTTP
bridge since the suite takes URLs only (`tests/support/stdio_bridge.py`): one process
and one bridge per revision (a stdio connection's era is fixed by its first request),
both sets at once again. There `dns-rebinding-protection` checks the bridge's own guard.

A scenario applies and passes (`PASSING`: a check succeeds and none fails), or does not
apply (`NOT_APPLICABLE`: it calls the suite's own test tools, resources or prompts, which
a server implements for the suite; skipped with the reason). The sets' `not_scored`
scenarios (extensions, pending ones) run too and are only reported. The counts are in
README.md's MCP section.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from mcp import MCPError
from mcp.types import INVALID_PARAMS, DiscoverResult, InitializeResult

from tests.support.cli import serving
from tests.support.conformance import (
    BEARER_TOKEN,
    ROOT,
    SUITE_TIMEOUT_S,
    Check,
    checks_by_scenario,
    failures,
    require_suite,
    required_scenarios,
    suite_command,
    suite_env,
)
from tests.support.mcp_serve import stdio_session
from tests.support.scripted_llm import ScriptedLLM
from tests.support.stdio_bridge import StdioBridge, stdio_bridge

SERVE_START_S = 120  # `ducklm serve` loads LangGraph and the stores first: slow on 2 busy cores
OLDER, CURRENT = "2025-11-25", "2026-07-28"
HTTP, STDIO = "/mcp", "stdio"
CLIENT_INFO = {"name": "stdio-bridge", "version": "1"}
# Each revision's first request on a stdio connection, which fixes its era.
OPENING = {
    OLDER: {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": OLDER, "capabilities": {}, "clientInfo": CLIENT_INFO},
    },
    CURRENT: {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": CURRENT,
                "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    },
}

PASSING = {
    OLDER: (
        "server-initialize",
        "ping",
        "tools-list",
        "resources-list",  # the conversations (none yet: an empty, well-formed list)
        "completion-complete",  # a prompt argument: no values (DuckLM completes thread ids)
        "logging-set-level",
        "dns-rebinding-protection",  # GuardMiddleware: a foreign Host is a 400
    ),
    CURRENT: (
        "completion-complete",
        "tools-list",
        "resources-list",
        "sep-2164-resource-not-found",  # -32602 at this revision (-32002 at 2025-11-25)
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
        "input-required-result-missing-input-response",
        "input-required-result-unsupported-methods",
        "input-required-result-ignore-extra-params",
        "input-required-result-validate-input",
    ),
}
SUITE_TOOL = "calls the suite's own test tool {}; DuckLM's tools are chat, chat_status, "
SUITE_TOOL += "memory_search and memory_add"
SUITE_RESOURCE = "reads the suite's own test resource {}; DuckLM's are its conversations "
SUITE_RESOURCE += "(read in test_mcp_serve)"
SUITE_PROMPT = "gets the suite's own test prompt {}; DuckLM has no prompts"
NO_PROMPTS = (
    "DuckLM has no prompts, so it declares no prompts capability and prompts/list is "
    "-32601 (method not found), as the spec has it"
)
STATELESS = "/mcp is stateless (no MCP session id: a long-lived server keeps no sessions, "
STATELESS += "decisions.md; nor does the stdio bridge, which holds no MCP state), and {}"
BOTH = {
    "tools-call-simple-text": SUITE_TOOL.format("test_simple_text"),
    "tools-call-image": SUITE_TOOL.format("test_image_content"),
    "tools-call-audio": SUITE_TOOL.format("test_audio_content"),
    "tools-call-embedded-resource": SUITE_TOOL.format("test_embedded_resource"),
    "tools-call-mixed-content": SUITE_TOOL.format("test_multiple_content_types"),
    "tools-call-error": SUITE_TOOL.format("test_error_handling")
    + " (an unknown tool is -32602 as the spec says, a bad argument an isError result)",
    "tools-call-with-progress": SUITE_TOOL.format("test_tool_with_progress")
    + " (chat reports progress: test_mcp_serve)",
    "resources-read-text": SUITE_RESOURCE.format("test://static-text"),
    "resources-read-binary": SUITE_RESOURCE.format("test://static-binary"),
    "resources-templates-read": SUITE_RESOURCE.format("test://template/{id}/data"),
    "prompts-list": NO_PROMPTS,
    "prompts-get-simple": SUITE_PROMPT.format("test_simple_prompt"),
    "prompts-get-with-args": SUITE_PROMPT.format("test_prompt_with_arguments"),
    "prompts-get-embedded-resource": SUITE_PROMPT.format("test_prompt_with_embedded_resource"),
    "prompts-get-with-image": SUITE_PROMPT.format("test_prompt_with_image"),
}
INPUT_TOOL = SUITE_TOOL + "; DuckLM asks its own person, never its caller"
NOT_APPLICABLE = {
    OLDER: BOTH
    | {
        "tools-call-with-logging": SUITE_TOOL.format("test_tool_with_logging")
        + " (chat logs its steps at info: test_mcp_serve)",
        "tools-call-sampling": SUITE_TOOL.format("test_sampling")
        + "; DuckLM never asks its caller to sample",
        "tools-call-elicitation": SUITE_TOOL.format("test_elicitation")
        + "; DuckLM asks its own person, never its caller",
        "elicitation-sep1034-defaults": SUITE_TOOL.format("test_elicitation_sep1034_defaults"),
        "elicitation-sep1330-enums": SUITE_TOOL.format("test_elicitation_sep1330_enums"),
        "server-sse-multiple-streams": STATELESS.format(
            "the scenario needs a session id to open its streams (it only warns, checking nothing)"
        ),
        "resources-subscribe": STATELESS.format(
            "subscribes to the suite's test://watched-resource; DuckLM offers no subscriptions"
        ),
        "resources-unsubscribe": STATELESS.format(
            "unsubscribes from the suite's test://watched-resource; DuckLM offers no subscriptions"
        ),
    },
    CURRENT: BOTH
    | {
        "server-stateless": "its checks that fail call the suite's diagnostic tools "
        "(test_missing_capability, test_streaming_elicitation, test_logging_tool); the "
        "others (discover, the envelope, no session) pass",
        "caching": NO_PROMPTS + " (its resources/read check needs a listed resource)",
        "input-required-result-basic-elicitation": INPUT_TOOL.format(
            "test_input_required_result_elicitation"
        ),
        "input-required-result-basic-sampling": INPUT_TOOL.format(
            "test_input_required_result_sampling"
        ),
        "input-required-result-basic-list-roots": INPUT_TOOL.format(
            "test_input_required_result_list_roots"
        ),
        "input-required-result-request-state": INPUT_TOOL.format(
            "test_input_required_result_request_state"
        ),
        "input-required-result-multiple-input-requests": INPUT_TOOL.format(
            "test_input_required_result_multiple_inputs"
        ),
        "input-required-result-multi-round": INPUT_TOOL.format(
            "test_input_required_result_multi_round"
        ),
        "input-required-result-non-tool-request": SUITE_PROMPT.format("test_input_required_prompt"),
        "input-required-result-result-type": INPUT_TOOL.format(
            "test_input_required_result_elicitation"
        ),
        "input-required-result-tampered-state": INPUT_TOOL.format(
            "test_input_required_result_request_state"
        ),
        "input-required-result-capability-check": INPUT_TOOL.format(
            "test_input_required_result_capabilities"
        ),
    },
}


@dataclass(frozen=True)
class SuiteRun:
    """One run of a requirement set: its scenarios' checks by name, and what the suite said."""

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


@dataclass(frozen=True)
class Serving:
    """A running `ducklm serve`: its URL, its token, the environment and folder it has."""

    url: str
    token: str
    env: dict[str, str]
    root: Path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def ducklm_serve(
    installed: None, model_server: ScriptedLLM, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Serving]:
    """`ducklm serve` on a data dir of its own, for the module."""
    root = await asyncio.to_thread(tmp_path_factory.mktemp, "mcp-server-conformance")
    token = secrets.token_urlsafe(32)
    env = await asyncio.to_thread(_serve_env, root, model_server, token)
    async with serving(env, root, limit_s=SERVE_START_S) as (url, _):
        yield Serving(url, token, env, root)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def suite_runs(ducklm_serve: Serving) -> dict[str, SuiteRun]:
    """Both requirement sets run against the `/mcp` of `ducklm serve` at once."""
    urls = dict.fromkeys((OLDER, CURRENT), f"{ducklm_serve.url}/mcp")
    return await _both_sets(urls, ducklm_serve.token, ducklm_serve.root)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stdio_bridges(
    installed: None, model_server: ScriptedLLM, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[dict[str, tuple[str, StdioBridge]]]:
    """A `ducklm mcp serve` and its bridge per revision, opened at it: URL and bridge."""
    root = await asyncio.to_thread(tmp_path_factory.mktemp, "mcp-stdio-conformance")

    async def opened(stack: contextlib.AsyncExitStack, revision: str) -> tuple[str, StdioBridge]:
        # Each its own data dir: one DuckLM process per store.
        env = await asyncio.to_thread(_serve_env, root / revision, model_server, None)
        log, opening = root / revision / "stderr.log", OPENING[revision]
        bridge = stdio_bridge(env, root / revision, opening, log=log, limit_s=SERVE_START_S)
        return await stack.enter_async_context(bridge)

    async with contextlib.AsyncExitStack() as stack:
        both = await asyncio.gather(*(opened(stack, r) for r in (OLDER, CURRENT)))
        yield dict(zip((OLDER, CURRENT), both, strict=True))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stdio_runs(
    stdio_bridges: dict[str, tuple[str, StdioBridge]], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, SuiteRun]:
    """Both requirement sets run at once, each against its revision's bridge."""
    root = await asyncio.to_thread(tmp_path_factory.mktemp, "mcp-stdio-suite")
    return await _both_sets({r: url for r, (url, _) in stdio_bridges.items()}, None, root)


async def _both_sets(urls: dict[str, str], token: str | None, root: Path) -> dict[str, SuiteRun]:
    """Each revision's requirement set against its URL, both at once; their runs."""
    said = await asyncio.gather(*(_run_suite(urls[r], token, r, root / r) for r in urls))
    runs = {}
    for revision, printed in zip(urls, said, strict=True):
        checks = await asyncio.to_thread(checks_by_scenario, root / revision)
        runs[revision] = SuiteRun(checks, printed)
    return runs


def _serve_env(root: Path, llm: ScriptedLLM, token: str | None) -> dict[str, str]:
    """DuckLM's environment: its files under `root`, our model, its token (if any)."""
    (root / "workspace").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUCK_")}
    env |= {
        "DUCK_DATA_DIR": str(root / "data"),
        "DUCK_WORKSPACE": str(root / "workspace"),
        "DUCK_LLM_BASE_URL": llm.base_url,
        "DUCK_EMBEDDINGS_URL": llm.base_url,
    }
    return env | ({"DUCK_API_TOKEN": token} if token is not None else {})


async def _run_suite(url: str, token: str | None, revision: str, out: Path) -> str:
    """The requirement set of `revision` against `url` (with `token` as a bearer token,
    when given); what the suite printed."""
    arguments = ("server", "--url", url, "--requirements", revision, "-o", str(out))
    env = suite_env()
    if token is None:
        command = suite_command(*arguments)
    else:
        command = suite_command(*arguments, preload=BEARER_TOKEN)
        env |= {"MCP_SERVER_URL": url, "MCP_BEARER_TOKEN": token}
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


def _cases() -> list[object]:
    cases: list[object] = []
    for door in (HTTP, STDIO):
        for revision in (OLDER, CURRENT):
            name = f"{door.strip('/')}-{revision}-{{}}"
            cases += [pytest.param(door, revision, s, id=name.format(s)) for s in PASSING[revision]]
            for scenario, why in NOT_APPLICABLE[revision].items():
                skip = pytest.mark.skip(reason=why)
                case = pytest.param(door, revision, scenario, id=name.format(scenario), marks=skip)
                cases.append(case)
    return cases


@pytest.mark.slow
@pytest.mark.parametrize(("door", "revision", "scenario"), _cases())
def test_server_scenario(
    door: str, revision: str, scenario: str, request: pytest.FixtureRequest
) -> None:
    runs: dict[str, SuiteRun] = request.getfixturevalue(
        "suite_runs" if door == HTTP else "stdio_runs"
    )
    run = runs[revision]
    checks = run.checks.get(scenario)
    assert checks is not None, f"the suite ran no {scenario!r}:\n{run.said[-4000:]}"
    failed = failures(checks)
    assert not failed, json.dumps(failed, indent=1)[:4000]
    assert any(c["status"] == "SUCCESS" for c in checks), f"no check succeeded: {checks}"


@pytest.mark.parametrize("revision", [OLDER, CURRENT])
def test_every_required_server_scenario_is_listed(installed: None, revision: str) -> None:
    listed = [*PASSING[revision], *NOT_APPLICABLE[revision]]
    assert len(listed) == len(set(listed)), "a scenario is in two lists"
    assert required_scenarios(revision, "server") == set(listed)


UNKNOWN = "ducklm://conversations/no-such-thread"
# An unknown resource's code follows the revision asked for (conversations.py).
NOT_FOUND = {OLDER: -32002, CURRENT: INVALID_PARAMS}


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("revision", [OLDER, CURRENT])
async def test_stdio_unknown_resource_code_follows_the_revision(
    revision: str, stdio_bridges: dict[str, tuple[str, StdioBridge]]
) -> None:
    _, bridge = stdio_bridges[revision]
    if revision == OLDER:  # the suite's scenarios initialized it too: at this revision
        assert "result" in await bridge.ask(OPENING[OLDER], SERVE_START_S)
    params = {"uri": UNKNOWN} | {
        k: v for k, v in OPENING[revision]["params"].items() if k == "_meta"
    }
    read = {"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": params}
    answer = await bridge.ask(read, SERVE_START_S)
    assert answer["id"] == 7, answer
    assert answer["error"]["code"] == NOT_FOUND[revision], answer
    assert UNKNOWN in answer["error"]["message"]


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
async def test_stdio_through_a_running_serve_speaks_the_revision_asked(
    ducklm_serve: Serving,
) -> None:
    # With `ducklm serve` on its data dir, `ducklm mcp serve` carries messages to its /mcp.
    for revision, opened_as in ((OLDER, InitializeResult), (CURRENT, DiscoverResult)):
        async with stdio_session(ducklm_serve.env, ducklm_serve.root, revision=revision) as (
            session,
            opened,
        ):
            assert isinstance(opened, opened_as), opened
            with pytest.raises(MCPError) as raised:
                await session.read_resource(UNKNOWN)
        assert raised.value.error.code == NOT_FOUND[revision], revision
