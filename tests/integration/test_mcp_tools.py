"""MCP tools in a turn, against a real MCP server (tests/support/mcp_server.py over stdio).

Names as the model sees them, DuckLM's policy over them (ask by default, trusted
read-only unasked, allow-forever exact), the audit's server and tool, a clean
environment, and the failures: a server that does not start, dies mid-call, hangs,
or answers too much.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM, RunResult
from tests.support.mcp_servers import http_server, python_server, write_config
from tests.support.scripted_llm import ScriptedLLM, call, reply

QUIET = {"critic": False, "memory": False}


@pytest.fixture
def settings(settings: Settings, tmp_path: Path) -> Settings:
    config = write_config(
        tmp_path / "mcp.json",
        notes=python_server(trust="trusted"),
        wiki=python_server(),
        broken={"command": str(tmp_path / "no-such-program")},
    )
    # Every tool fits (the budget's own test sets a small one): MCP schemas may take half
    # the input budget less DuckLM's own tools, which grow as DuckLM gains tools.
    update = {
        "mcp_config": config,
        "mcp_timeout_s": 2.0,
        "mcp_tool_tokens": 100_000,
        "ctx_size": 32_768,
        "max_input_tokens": 16_384,
    }
    return settings.model_copy(update=update)


@pytest.fixture
async def duck(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[DuckLM]:
    # A secret of the parent and one of DuckLM's own: neither may reach a server.
    monkeypatch.setenv("PARENT_SECRET", "hunter2")
    monkeypatch.setenv("DUCK_API_TOKEN", "t" * 32)
    async with DuckLM.open(settings) as runtime:
        yield runtime


def _finished(result: RunResult) -> dict[str, Any]:
    return next(e for e in result.events if e["type"] == "tool_call_finished")


def _offered(llm: ScriptedLLM, index: int = 0) -> list[str]:
    return [t["function"]["name"] for t in llm.requests[index].get("tools", [])]


async def test_tools_are_named_server__tool_and_a_broken_server_is_said(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    llm.script(reply("Hello."))
    result = await duck.run("hello there", **QUIET)
    assert result.status == "completed"
    offered = _offered(llm)
    assert {"notes__read_note", "wiki__send", "wiki__inject"} <= set(offered)
    assert "file_read" in offered
    schema = next(t for t in llm.requests[0]["tools"] if t["function"]["name"] == "notes__echo")
    assert schema["function"]["parameters"]["required"] == ["text"]
    (error,) = [e for e in result.events if e["type"] == "error"]
    assert error["stage"] == "mcp" and error["fatal"] is False and error["server"] == "broken"
    assert "MCP server 'broken' did not start: program not found" in error["message"]


async def test_an_mcp_call_asks_by_default_then_runs(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.script(reply(tool_calls=[call("wiki__echo", text="quack")]))
    result = await duck.run("echo quack", thread_id="t1", **QUIET)
    assert result.status == "interrupted"
    (question,) = result.pending[0]["request"]["action_requests"]
    assert question["name"] == "wiki__echo"
    assert question["description"] == "echo on the MCP server wiki (untrusted)"

    llm.script(reply("It said quack."))
    result = await duck.resume_run("t1", [{"type": "approve"}], **QUIET)
    assert result.answer == "It said quack."
    finished = _finished(result)
    assert (finished["server"], finished["mcp_tool"], finished["output"]) == (
        "wiki",
        "echo",
        "quack",
    )
    assert llm.requests[-1]["messages"][-1]["content"] == "quack"


async def test_a_trusted_read_only_tool_runs_unasked(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.script(reply(tool_calls=[call("notes__read_note", name="shop")]), reply("Buy milk."))
    result = await duck.run("what is in my shop note?", **QUIET)
    assert result.status == "completed" and not result.pending
    finished = _finished(result)
    assert (finished["approved_by"], finished["output"]) == ("policy", "note shop: buy milk")
    started = next(e for e in result.events if e["type"] == "tool_call_started")
    assert (started["server"], started["mcp_tool"]) == ("notes", "read_note")


async def test_destructive_is_shown_and_allow_forever_is_exact(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    llm.script(reply(tool_calls=[call("notes__delete_note", name="old")]))
    result = await duck.run("delete my old note", thread_id="t1", **QUIET)
    (question,) = result.pending[0]["request"]["action_requests"]
    assert question["description"].endswith("the server says this tool may destroy data")
    llm.script(reply("Deleted."))
    await duck.resume_run("t1", [{"type": "allow_forever"}], **QUIET)
    (rule,) = await duck.approval_rules()
    assert (rule.tool, rule.pattern) == (
        "notes__delete_note",
        'mcp:notes/delete_note:{"name":"old"}',
    )

    llm.script(reply(tool_calls=[call("notes__delete_note", name="old")]), reply("Again."))
    again = await duck.run("delete it again", **QUIET)
    assert again.status == "completed" and _finished(again)["approved_by"] == f"rule {rule.id}"
    llm.script(reply(tool_calls=[call("notes__delete_note", name="other")]))
    other = await duck.run("delete the other note", **QUIET)
    assert other.status == "interrupted", "a rule for one call never allows another"


async def test_a_server_gets_a_clean_environment_in_the_workspace(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path
) -> None:
    llm.script(reply(tool_calls=[call("notes__environment")]), reply("Seen."))
    result = await duck.run("show the environment", **QUIET)
    names, cwd = _finished(result)["output"].split("\ncwd=")
    assert "PATH" in names.split()
    assert "PARENT_SECRET" not in names and "DUCK_" not in names
    assert cwd == str(await asyncio.to_thread(workspace.resolve))


async def test_a_crash_mid_call_is_named_and_the_next_turn_restarts_it(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    llm.script(reply(tool_calls=[call("notes__crash")]))
    result = await duck.run("crash", thread_id="t1", **QUIET)
    llm.script(reply("It crashed."))
    result = await duck.resume_run("t1", [{"type": "approve"}], **QUIET)
    assert result.status == "completed"
    finished = _finished(result)
    assert finished["status"] == "error"
    assert "MCP server 'notes' crashed" in finished["output"]
    assert "its last words: fatal: the test server was told to crash" in finished["output"]

    llm.script(reply(tool_calls=[call("notes__read_note", name="a")]), reply("Back."))
    again = await duck.run("read note a", **QUIET)
    assert "notes__read_note" in _offered(llm, -2), "the next turn starts the server again"
    assert _finished(again)["output"] == "note a: buy milk"


async def test_a_hanging_call_times_out(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.script(reply(tool_calls=[call("notes__hang")]))
    await duck.run("hang", thread_id="t1", **QUIET)
    llm.script(reply("It hung."))
    result = await duck.resume_run("t1", [{"type": "approve"}], **QUIET)
    finished = _finished(result)
    assert finished["status"] == "error"
    assert (
        finished["output"]
        == "the MCP tool notes__hang did not answer within 2 s; it was told to stop"
    )


async def test_a_huge_result_is_clipped_like_other_tool_output(
    duck: DuckLM, llm: ScriptedLLM, settings: Settings
) -> None:
    llm.script(reply(tool_calls=[call("notes__huge")]))
    await duck.run("huge", thread_id="t1", **QUIET)
    llm.script(reply("Big."))
    result = await duck.resume_run("t1", [{"type": "approve"}], **QUIET)
    finished = _finished(result)
    assert finished["truncated"] is True
    assert len(finished["output"]) < 200_100  # the audit keeps a capped copy, not a megabyte
    kept = (await duck.messages("t1"))[-2]  # the ToolMessage, before the answer
    assert len(kept.text) < settings.max_tool_output_chars + 100
    assert "chars cut; the full output is in the audit log" in kept.text
    assert "MIDDLE" not in llm.requests[-1]["messages"][-1]["content"]


async def test_http_transport(settings: Settings, llm: ScriptedLLM, tmp_path: Path) -> None:
    async with http_server() as url:
        config = tmp_path / "http.json"
        await asyncio.to_thread(write_config, config, web={"url": url, "trust": "trusted"})
        async with DuckLM.open(settings.model_copy(update={"mcp_config": config})) as duck:
            llm.script(reply(tool_calls=[call("web__read_note", name="h")]), reply("Over HTTP."))
            result = await duck.run("read note h", **QUIET)
    assert result.status == "completed"
    assert _finished(result)["output"] == "note h: buy milk"


@pytest.mark.parametrize("revision", [None, "2025-11-25"])
async def test_a_session_that_ends_under_a_call_fails_it_at_once(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path, revision: str | None
) -> None:
    # The server process ends mid-call, closing the call's stream; with ten minutes
    # to run, the call must fail now, with the reason, not wait out its deadline.
    async with http_server(revision=revision) as url:
        config = tmp_path / "http.json"
        entry = {"url": url, "trust": "trusted", "timeout_s": 600}
        await asyncio.to_thread(write_config, config, web=entry)
        async with DuckLM.open(settings.model_copy(update={"mcp_config": config})) as duck:
            llm.script(reply(tool_calls=[call("web__crash")]))
            await duck.run("crash", thread_id="t1", **QUIET)
            llm.script(reply("It ended."))
            result = await duck.resume_run("t1", [{"type": "approve"}], **QUIET)
    finished = _finished(result)
    assert finished["status"] == "error"
    assert "did not answer within" not in finished["output"]
    assert finished["output"].startswith(("the call was lost", "the MCP server refused")), finished


async def test_past_the_budget_the_tools_nearest_the_request_are_offered(
    settings: Settings, llm: ScriptedLLM
) -> None:
    one_tool = 120  # about one small schema: the budget holds one or two tools
    async with DuckLM.open(settings.model_copy(update={"mcp_tool_tokens": one_tool})) as duck:
        llm.script(reply("Sure."))
        await duck.run("please delete the note called groceries", **QUIET)
    mcp = [name for name in _offered(llm) if "__" in name]
    assert mcp, "the nearest tools are offered"
    assert mcp[0].endswith("__delete_note"), mcp
    assert len(mcp) < 4
    assert {"file_read", "shell_exec"} <= set(_offered(llm)), "DuckLM's own tools stay"


JSON_MODELS = """
defaults: {{base_url: {url}, model: scripted, api_key: test}}
roles:
  action: {{tool_mode: json, structured_output: json_schema}}
"""


async def test_json_directive_mode_offers_and_runs_mcp_tools(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    models = tmp_path / "models.yaml"
    await asyncio.to_thread(models.write_text, JSON_MODELS.format(url=llm.base_url))
    action = {"tool": "notes__read_note", "args": {"name": "j"}}
    directive = json.dumps({"reasoning": "look it up", "actions": [action]})
    llm.script(reply(directive), reply('{"reasoning": "done", "actions": []}'), reply("Milk."))
    async with DuckLM.open(settings.model_copy(update={"models_config": models})) as duck:
        result = await duck.run("what is in note j?", **QUIET)
    assert result.status == "completed"
    assert _finished(result)["output"] == "note j: buy milk"
    prompt = llm.requests[0]["messages"][0]["content"]
    assert "- notes__read_note(name): Read the note called `name`." in prompt
