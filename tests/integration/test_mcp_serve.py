"""DuckLM as an MCP server, used by the `mcp` SDK's client as another agent would.

Over stdio (`ducklm mcp serve`, a real process on the scripted model) and over HTTP
(`/mcp` on the real server app): the tools, a turn's answer, a turn that needs approval
(the caller never approves it), memory, the conversations as resources, and the
token and Host rules of the HTTP endpoint.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, MCPDeprecationWarning, MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolResult,
    InitializeResult,
    LoggingMessageNotificationParams,
    TextContent,
)

from ducklm.config.settings import Settings
from tests.support.cli import cli_env
from tests.support.mcp_serve import CURRENT, OLDER, http_session, stdio_session
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served

pytestmark = pytest.mark.slow

TOOLS = {"chat", "chat_status", "memory_search", "memory_add"}
QUIET = {"critic": False, "memory": False}  # one scripted reply per turn
OVERWRITE = call("file_write", path="a.txt", content="new", overwrite=True)


@pytest.fixture
def server_settings(settings: Settings, llm: ScriptedLLM) -> Settings:
    """Served with the scripted server's embeddings, so memory needs no local model."""
    return settings.model_copy(update={"embeddings_url": llm.base_url})


@pytest.fixture
def env(settings: Settings, llm: ScriptedLLM) -> dict[str, str]:
    """The environment a host would give `ducklm mcp serve`: DuckLM's data, our model."""
    return {**cli_env(settings), "DUCK_EMBEDDINGS_URL": llm.base_url}


def text_of(result: CallToolResult) -> str:
    """The result's text blocks, joined."""
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


def facts(result: CallToolResult) -> dict[str, Any]:
    """The result's structured content."""
    assert result.structured_content is not None, text_of(result)
    return result.structured_content


async def chat(session: ClientSession, message: str, **args: Any) -> CallToolResult:
    return await session.call_tool("chat", {"message": message, **QUIET, **args})


async def test_stdio_serves_a_turn_and_its_conversation(
    env: dict[str, str], llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.script(reply("Quack."))
    async with stdio_session(env, tmp_path) as (session, init):
        assert isinstance(init, InitializeResult) and init.server_info.name == "ducklm"
        assert {t.name for t in (await session.list_tools()).tools} == TOOLS
        result = await chat(session, "hello duck")
        assert not result.is_error, text_of(result)
        done = facts(result)
        assert (done["status"], done["text"]) == ("completed", "Quack.")
        thread = done["thread_id"]

        uri = f"ducklm://conversations/{thread}"
        listed = (await session.list_resources()).resources
        assert [(str(r.uri), r.title) for r in listed] == [(uri, "hello duck")]
        read = (await session.read_resource(uri)).contents[0]
        shown = json.loads(read.text)  # type: ignore[union-attr]
        assert [(m["role"], m["content"]) for m in shown["messages"]] == [
            ("user", "hello duck"),
            ("assistant", "Quack."),
        ]


async def test_stdio_refuses_a_turn_that_needs_approval(
    env: dict[str, str], llm: ScriptedLLM, workspace: Path, tmp_path: Path
) -> None:
    target = workspace / "a.txt"
    await asyncio.to_thread(target.write_text, "old")
    llm.script(reply(tool_calls=[OVERWRITE]))
    steps: list[str] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        steps.append(message or "")

    logs: list[LoggingMessageNotificationParams] = []
    async with stdio_session(env, tmp_path, logs=logs) as (session, _):
        with warnings.catch_warnings():  # deprecated at 2026-07-28; this is a 2025-11-25 call
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            setting = session.set_logging_level("info")  # the steps, as log messages too
        await setting
        result = await session.call_tool(
            "chat", {"message": "overwrite a.txt", **QUIET}, progress_callback=progress
        )
        assert result.is_error
        refused = facts(result)
        assert refused["status"] == "refused"
        assert "nobody can answer" in refused["text"]
        assert "a.txt" in refused["text"]  # it says what needed approval
        assert any(s.startswith("asking the person") for s in steps), steps
        assert [(m.level, m.logger, m.data) for m in logs] == [
            ("info", "ducklm", step) for step in steps
        ]
        status = await session.call_tool("chat_status", {"thread_id": refused["thread_id"]})
        assert facts(status)["status"] == "cancelled"
    assert await asyncio.to_thread(target.read_text) == "old"
    assert len(llm.requests) == 1  # the turn went no further than the question


async def test_stdio_memory_add_then_search(env: dict[str, str], tmp_path: Path) -> None:
    async with stdio_session(env, tmp_path) as (session, _):
        added = await session.call_tool(
            "memory_add", {"text": "Ana lives in Porto", "scope": "global"}
        )
        assert not added.is_error, text_of(added)
        found = await session.call_tool("memory_search", {"query": "Ana lives in Porto"})
        assert not found.is_error, text_of(found)
        hits = facts(found)["hits"]
        assert hits and hits[0]["text"] == "Ana lives in Porto"
        assert hits[0]["id"] == facts(added)["id"]


async def test_stdio_bad_arguments_are_a_clear_tool_error(
    env: dict[str, str], tmp_path: Path
) -> None:
    async with stdio_session(env, tmp_path) as (session, _):
        empty = await session.call_tool("chat", {"message": ""})
        assert empty.is_error and "message" in text_of(empty)
        outside = await chat(session, "hi", workspace="/etc")
        assert outside.is_error and "/etc" in text_of(outside)


async def test_http_turn_waits_for_the_person(
    served: Served, llm: ScriptedLLM, workspace: Path
) -> None:
    target = workspace / "a.txt"
    await asyncio.to_thread(target.write_text, "old")
    llm.script(reply(tool_calls=[OVERWRITE]))
    logs: list[LoggingMessageNotificationParams] = []
    async with http_session(f"{served.url}/mcp", served.headers, logs=logs) as (session, init):
        assert isinstance(init, InitializeResult) and init.server_info.name == "ducklm"
        assert {t.name for t in (await session.list_tools()).tools} == TOOLS
        result = await chat(session, "overwrite a.txt")
        assert logs == []  # steps are info; a caller hears warnings only unless it asks
        waiting = facts(result)
        assert not result.is_error and waiting["status"] == "waiting", waiting
        assert "web chat" in waiting["text"] and waiting["thread_id"] in text_of(result)
        assert await asyncio.to_thread(target.read_text) == "old"  # the caller approved nothing

        # The person approves in the web chat (its route); the caller follows the turn.
        llm.script(reply("Overwritten."))
        answer = {"decisions": [{"type": "approve"}]}
        path = f"/v1/tasks/{waiting['task_id']}/continue/stream"
        approved = await served.client.post(path, json=answer)
        assert approved.status_code == 200, approved.text
        status = await session.call_tool(
            "chat_status", {"thread_id": waiting["thread_id"], "wait_s": 30}
        )
        assert (facts(status)["status"], facts(status)["text"]) == ("completed", "Overwritten.")
    assert await asyncio.to_thread(target.read_text) == "new"


async def test_http_memory_and_conversations(served: Served, llm: ScriptedLLM) -> None:
    llm.script(reply("Quack."))
    async with http_session(f"{served.url}/mcp", served.headers) as (session, _):
        await session.call_tool("memory_add", {"text": "The duck is yellow", "scope": "global"})
        found = await session.call_tool("memory_search", {"query": "The duck is yellow"})
        assert facts(found)["hits"][0]["text"] == "The duck is yellow"
        thread = facts(await chat(session, "hello"))["thread_id"]
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["ducklm://conversations/{thread_id}"]
        read = await session.read_resource(f"ducklm://conversations/{thread}")
        assert json.loads(read.contents[0].text)["title"] == "hello"  # type: ignore[union-attr]


async def test_http_unknown_tool_is_a_protocol_error(served: Served) -> None:
    async with http_session(f"{served.url}/mcp", served.headers) as (session, init):
        assert init.capabilities.logging is not None
        with pytest.raises(MCPError) as raised:
            await session.call_tool("shell", {"command": "ls"})
        assert raised.value.error.code == INVALID_PARAMS  # the spec's code for it
        assert "'shell'" in raised.value.error.message
        assert "chat" in raised.value.error.message  # and what there is instead


async def test_http_unknown_resource_code_follows_the_revision(served: Served) -> None:
    uri = "ducklm://conversations/no-such-thread"
    for revision, code in ((OLDER, -32002), (CURRENT, INVALID_PARAMS)):
        async with http_session(f"{served.url}/mcp", served.headers, revision=revision) as opened:
            session, _ = opened
            with pytest.raises(MCPError) as raised:
                await session.read_resource(uri)
        assert raised.value.error.code == code, revision  # stdio: test_mcp_conformance_server
        assert uri in raised.value.error.message


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


async def test_http_endpoint_wants_the_token_and_a_known_host(served: Served) -> None:
    client = served.client
    bare = {"Authorization": ""}  # the shared client sends the token unless told
    refused = await client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bare})
    assert refused.status_code == 401
    assert "token" in refused.json()["detail"]
    wrong = {**MCP_HEADERS, "Authorization": "Bearer not-the-token"}
    assert (await client.post("/mcp", json=INITIALIZE, headers=wrong)).status_code == 401
    foreign = {**MCP_HEADERS, "Host": "evil.example"}
    rebound = await client.post("/mcp", json=INITIALIZE, headers=foreign)
    assert rebound.status_code == 400
    assert "evil.example" in rebound.json()["detail"]
    ok = await client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
    assert ok.status_code == 200, ok.text
