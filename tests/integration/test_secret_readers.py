"""One secret rule for every reader: no canary reaches a request the model received.

The workspace holds credentials under names no list knows (`tests/support/
secret_canaries.py`) and `.env` in its git history. The scripted model reads them every
way issue 41's corpus did: shell (`cat`, `git show HEAD~1:.env`, `git log -p`,
`git remote -v` with a token, `cat .git/config`, `grep -r`), the file tools (by name, by
absolute path, through a link), `search_files`, and an MCP tool's result. Each test
looks for every canary in every request the model received, and in the events; the
markers must name the kind and the place.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM, RunResult
from tests.support import secret_canaries as c
from tests.support.mcp_servers import python_server, write_config
from tests.support.scripted_llm import ScriptedLLM, ToolCallSpec, reply

QUIET = {"critic": False, "memory": False}
SHELL = {
    "envrc": "cat .envrc",
    "aws": "cat .aws/credentials",
    "docker": "cat .docker/config.json",
    "kube": "cat .kube/config",
    "tfvars": "cat prod.tfvars",
    "htpasswd": "cat .htpasswd",
    "wp": "cat wp-config.php",
    "django": "cat site/settings.py",
    "show": "git show HEAD~1:.env",
    "log": "git log -p",
    "remote": "git remote -v",
    "config": "cat .git/config",
    "grep": "grep -rn -i -e key -e token -e auth --exclude-dir=.git .",
    "pem": "cat keys/deploy.txt notes/chat.md",
}


@pytest.fixture
def settings(settings: Settings, tmp_path: Path, workspace: Path) -> Settings:
    c.plant(workspace)
    env = {"MCP_TEST_INJECTION": "".join(c.FILES.values())}
    config = write_config(tmp_path / "mcp.json", notes=python_server(trust="trusted", env=env))
    return settings.model_copy(update={"mcp_config": config, "mcp_tool_tokens": 100_000})


def _call(call_id: str, name: str, **args: Any) -> ToolCallSpec:
    return ToolCallSpec(name, args, id=call_id)


def _seen(llm: ScriptedLLM, result: RunResult) -> str:
    """Everything the model was sent, and every event of the run."""
    return json.dumps(llm.requests) + json.dumps(result.events, default=str)


def _leaked(text: str) -> list[str]:
    return [name for name, value in c.CANARIES.items() if value in text]


def _results(llm: ScriptedLLM) -> dict[str, str]:
    """The tool results in the last request, by call id."""
    messages = llm.requests[-1]["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


async def _run_all(duck: DuckLM, llm: ScriptedLLM, calls: list[ToolCallSpec]) -> RunResult:
    """One turn that makes `calls` at once, every question approved (none should come)."""
    llm.script(reply(tool_calls=calls), reply("Read them."))
    result = await duck.run("read the project's settings", thread_id="t", **QUIET)
    assert result.pending == [], result.pending
    assert result.status == "completed"
    return result


async def test_shell_readers_show_markers_never_the_secrets(duck: DuckLM, llm: ScriptedLLM) -> None:
    calls = {key: _call(key, "shell_exec", command=command) for key, command in SHELL.items()}
    result = await _run_all(duck, llm, list(calls.values()))
    assert _leaked(_seen(llm, result)) == []
    out = {key: _results(llm)[key] for key in calls}
    # A command's lines are counted in its result, after the `exit code 0` line.
    assert all(text.startswith("exit code 0") for text in out.values()), out
    assert "[secret hidden: AWS secret key, output line 4]" in out["aws"]
    assert "[secret hidden: GitHub token, output line 3]" in out["envrc"]
    assert "[secret hidden: credential, output line 5]" in out["docker"]
    assert "[secret hidden: password hash, output line 2]" in out["htpasswd"]
    assert "[secret hidden: secret, output line 3]" in out["django"]
    assert "[secret hidden: Stripe key, output line 3]" in out["show"]
    assert "[secret hidden: Stripe key, .env line 2]" in out["log"]  # the diff's file and line
    assert "@github.com/o/r.git (fetch)" in out["remote"] and "secret hidden" in out["remote"]
    assert "[secret hidden: token, ./prod.tfvars line 3]" in out["grep"]
    assert "region" in out["tfvars"] and "-----END" not in out["pem"]


async def test_file_tools_hide_by_content_and_search_leaves_secret_files_out(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "keep.env").write_text, f"STRIPE={c.STRIPE}\n")
    await asyncio.to_thread((workspace / ".env.local").write_text, "PIN=4711-local\n")
    read = _call("read", "file_read", path=".aws/credentials")
    search = _call("search", "search_files", query="=")
    result = await _run_all(duck, llm, [read, search])
    assert _leaked(_seen(llm, result)) == []
    out = _results(llm)
    assert out["read"].splitlines()[2] == (
        "aws_secret_access_key = [secret hidden: AWS secret key, .aws/credentials line 3]"
    )
    assert "[secret hidden: Stripe key, keep.env line 1]" in out["search"]
    assert "4711-local" not in out["search"]  # `.env.*` by name, as the sandbox masks it


@pytest.mark.parametrize("how", ["name", "absolute", "link"])
async def test_file_read_of_a_secret_name_asks_and_a_refusal_reads_nothing(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path, how: str
) -> None:
    pin = "PIN=4711-never-shown"
    await asyncio.to_thread((workspace / ".env.local").write_text, pin + "\n")
    await asyncio.to_thread((workspace / "settings.txt").symlink_to, ".env.local")
    path = {"name": ".env.local", "absolute": f"{workspace}/.env.local", "link": "settings.txt"}
    read = _call("read", "file_read", path=path[how])
    llm.script(reply(tool_calls=[read]), reply("Fine."))
    paused = await duck.run("read the settings", thread_id="t", **QUIET)
    (question,) = paused.pending[0]["request"]["action_requests"]
    assert "reads secrets: .env.local" in question["description"]
    result = await duck.resume_run("t", [{"type": "reject", "message": "no"}], **QUIET)
    assert result.status == "completed"
    assert pin not in _seen(llm, result)


async def test_a_read_the_person_approves_is_shown_in_clear(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / ".env.local").write_text, f"STRIPE={c.STRIPE}\n")
    llm.script(reply(tool_calls=[_call("read", "file_read", path=".env.local")]), reply("Ok."))
    paused = await duck.run("read .env.local", thread_id="t", **QUIET)
    assert len(paused.pending) == 1
    result = await duck.resume_run("t", [{"type": "approve"}], **QUIET)
    assert result.status == "completed"
    assert _results(llm)["read"] == f"STRIPE={c.STRIPE}\n"


async def test_an_mcp_tool_result_goes_through_the_same_rule(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    result = await _run_all(duck, llm, [_call("lookup", "notes__inject", topic="setup")])
    assert _leaked(_seen(llm, result)) == []
    text = _results(llm)["lookup"]
    assert "[secret hidden: AWS secret key, output line" in text
    assert text.count("[secret hidden:") >= 15
