"""DuckLM's MCP client at the spec, against real servers (the Python one and everything).

Variables in the config, the revision agreed (2026-07-28, or 2025-11-25 with an older
server), who DuckLM says it is and its roots, a JSON-RPC error as a tool error, every
content type rendered, progress that keeps a call alive, a timeout that tells the server
to stop (`notifications/cancelled`, at each revision), a failed start retried after a
pause.
"""

from __future__ import annotations

import asyncio
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import types

from ducklm.mcp.config import ServerSpec
from ducklm.mcp.server import McpServer
from ducklm.mcp.tools import adapt_tool
from ducklm.tools.errors import ToolError
from ducklm.tools.mcp_info import progress_listener
from tests.support.mcp_servers import OLDER, npm_server, python_server

CURRENT = "2026-07-28"


def _server(tmp_path: Path, name: str, config: dict[str, Any], timeout_s: float = 20) -> McpServer:
    spec = ServerSpec.model_validate({**config, "name": name})
    return McpServer(spec, workspace=tmp_path, log_dir=tmp_path / "mcp", timeout_s=timeout_s)


@pytest.fixture
def everything() -> dict[str, Any]:
    return npm_server("server-everything")  # sync: it looks for the installed package


@pytest.fixture
async def started(tmp_path: Path) -> AsyncIterator[list[McpServer]]:
    servers: list[McpServer] = []
    yield servers
    await asyncio.gather(*(s.stop() for s in servers))


async def _start(started: list[McpServer], server: McpServer) -> McpServer:
    started.append(server)
    await server.ensure()
    return server


def _tool(server: McpServer, name: str) -> Any:
    return next(t for t in server.tools if t.name == f"{server.spec.name}__{name}")


async def _call(server: McpServer, name: str, **args: Any) -> Any:
    call = {"type": "tool_call", "name": name, "id": "c1", "args": args}
    return await _tool(server, name).ainvoke(call)


async def test_variables_are_filled_when_the_server_starts(
    tmp_path: Path, started: list[McpServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WIKI_SECRET", "s3cret")
    env = {"MCP_TEST_INJECTION": "${WIKI_SECRET} and ${WIKI_MISSING:-fallback}"}
    server = await _start(started, _server(tmp_path, "wiki", python_server(env=env)))
    message = await _call(server, "inject")
    assert message.text == "s3cret and fallback"


async def test_an_unset_variable_fails_that_server_and_names_it(
    tmp_path: Path, started: list[McpServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    config = python_server(env={"KEY": "${NOT_SET_ANYWHERE}"})
    server = await _start(started, _server(tmp_path, "wiki", config))
    assert server.state == "failed"
    assert "the variable NOT_SET_ANYWHERE is not set (named in env.KEY)" in (server.error or "")


@pytest.mark.parametrize("revision", [CURRENT, OLDER])
async def test_ducklm_says_who_it_is_and_offers_the_workspace_as_root(
    tmp_path: Path, started: list[McpServer], revision: str
) -> None:
    pinned = python_server(revision=None if revision == CURRENT else revision)
    server = await _start(started, _server(tmp_path, "notes", pinned))
    assert server.revision == revision  # the newest both speak
    message = await _call(server, "whoami")
    assert message.text.startswith("ducklm 0.")
    assert message.text.endswith(tmp_path.as_uri())


async def test_a_json_rpc_error_is_a_tool_error_and_the_server_stays(
    tmp_path: Path, started: list[McpServer]
) -> None:
    server = await _start(started, _server(tmp_path, "notes", python_server()))
    with pytest.raises(ToolError, match=r"refused the call to notes__needs_sign_in: .*-32042"):
        await _call(server, "needs_sign_in")
    assert server.state == "running"
    assert (await _call(server, "echo", text="still here")).text == "still here"


async def test_an_error_result_is_a_tool_error(
    tmp_path: Path, started: list[McpServer], everything: dict[str, Any]
) -> None:
    server = await _start(started, _server(tmp_path, "ev", everything))
    ghost = adapt_tool(server, types.Tool(name="no-such-tool", input_schema={"type": "object"}))
    with pytest.raises(ToolError, match=r"ev__no-such-tool reported an error: .*not found"):
        await ghost.ainvoke({})
    assert server.state == "running"


async def test_every_content_type_reaches_the_model_as_words(
    tmp_path: Path, started: list[McpServer], everything: dict[str, Any]
) -> None:
    server = await _start(started, _server(tmp_path, "ev", everything))
    image = await _call(server, "get-tiny-image")
    (path,) = [p["path"] for p in image.artifact["mcp_content"]["parts"] if p["type"] == "image"]
    assert f"saved at {path}]" in image.text
    mode = (await asyncio.to_thread(Path(path).stat)).st_mode
    assert stat.S_IMODE(mode) == 0o600
    assert "\n\n" in image.text  # its text blocks stay apart

    links = await _call(server, "get-resource-links", count=2)
    assert links.text.count("[resource link: ") == 2
    kinds = [p["type"] for p in links.artifact["mcp_content"]["parts"]]
    assert kinds.count("resource_link") == 2

    weather = await _call(server, "get-structured-content", location="New York")
    assert weather.artifact["mcp_content"]["structured"]["temperature"] is not None


async def test_progress_keeps_a_call_alive_past_its_idle_timeout(
    tmp_path: Path, started: list[McpServer]
) -> None:
    config = python_server(idle_timeout_s=1, timeout_s=20)
    server = await _start(started, _server(tmp_path, "notes", config))
    heard: list[tuple[float, float | None, str | None]] = []
    token = progress_listener.set(lambda done, of, words: heard.append((done, of, words)))
    try:
        message = await _call(server, "slow_with_progress", steps=4, pause_s=0.6)
    finally:
        progress_listener.reset(token)
    assert message.text == "done"  # 2.4 s in all, never 1 s without news
    assert heard[-1] == (4, 4, "step 4")


@pytest.mark.parametrize("revision", [CURRENT, OLDER])
async def test_a_timeout_tells_the_server_to_stop(
    tmp_path: Path, started: list[McpServer], revision: str
) -> None:
    sent = tmp_path / "sent.txt"
    pinned = None if revision == CURRENT else revision
    config = python_server(env={"MCP_TEST_SENT": str(sent)}, timeout_s=1, revision=pinned)
    server = await _start(started, _server(tmp_path, "notes", config))
    assert server.revision == revision
    with pytest.raises(ToolError, match="did not answer within 1 s; it was told to stop"):
        await _call(server, "wait_for_cancel")
    for _ in range(50):
        if await asyncio.to_thread(sent.exists):
            break
        await asyncio.sleep(0.1)
    assert (await asyncio.to_thread(sent.read_text)).strip() == "cancelled"
    assert server.state == "running"


async def test_a_failed_start_is_retried_after_a_pause_not_every_turn(
    tmp_path: Path, started: list[McpServer]
) -> None:
    server = await _start(started, _server(tmp_path, "gone", {"command": str(tmp_path / "nope")}))
    first = server.error
    assert server.state == "failed"
    assert first is not None
    assert "program not found" in first
    await server.ensure()  # the next turn, a moment later: not tried again
    assert server.state == "failed"
    assert server.error == first
    assert server.retry_in_s() > 0


async def test_an_input_required_round_with_nobody_to_ask_is_a_tool_error(
    tmp_path: Path, started: list[McpServer]
) -> None:
    server = await _start(started, _server(tmp_path, "trips", python_server()))
    assert server.revision == CURRENT  # its question comes as an `input_required` result
    with pytest.raises(ToolError, match="only during one of its tool calls, and none is waiting"):
        await _call(server, "book_trip")
    assert server.state == "running"
