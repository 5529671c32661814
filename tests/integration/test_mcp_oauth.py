"""OAuth for MCP servers over HTTP, against a real authorization server on loopback.

`ducklm mcp login` runs as a person runs it (a subprocess, `--no-browser`); the test is
the person's browser: it fetches the printed URL and follows the redirect back to
DuckLM's loopback listener (tests/support/oauth_mcp_server.py approves at once). Then a
turn's server, with nobody to ask, uses the stored token and refreshes it when it
expires. The conformance suite's OAuth scenarios are in test_mcp_conformance.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ducklm.config.settings import Settings
from ducklm.mcp.config import ServerSpec
from ducklm.mcp.oauth.loopback import LoopbackCallback
from ducklm.mcp.server import McpServer
from tests.support.cli import cli_env, start_cli
from tests.support.mcp_servers import oauth_server, write_config

TTL_S = 2

NEEDS_NOTES_LOGIN = (
    "MCP server 'notes' needs authorization: run `ducklm mcp login notes`,"
    " or press Connect on its card in the web chat's Activity panel"
)


@pytest.fixture
async def oauth_url() -> AsyncIterator[str]:
    """The MCP endpoint of a server behind OAuth whose tokens live `TTL_S` seconds."""
    async with oauth_server(TTL_S) as url:
        yield url


async def _browser() -> httpx.AsyncClient:
    # Made in a thread: an httpx client loads the CA bundle from disk.
    return await asyncio.to_thread(httpx.AsyncClient, follow_redirects=True, timeout=20)


async def _login(settings: Settings, name: str) -> tuple[int, str]:
    """`ducklm mcp login NAME --no-browser`, signed in by fetching the printed URL."""
    proc = await start_cli(
        "mcp", "login", name, "--no-browser", env=cli_env(settings), cwd=settings.workspace
    )
    assert proc.stdout is not None
    printed = []
    while line := (await asyncio.wait_for(proc.stdout.readline(), timeout=60)).decode():
        printed.append(line)
        if line.startswith("http"):
            async with await _browser() as browser:
                page = await browser.get(line.strip())
            assert page.status_code == 200, page.text
            assert "DuckLM is authorized" in page.text
    await asyncio.wait_for(proc.wait(), timeout=60)
    assert proc.returncode is not None
    return proc.returncode, "".join(printed)


def _turn_server(settings: Settings, spec: ServerSpec) -> McpServer:
    """The server as a turn holds it: nobody at hand to sign in."""
    logs = settings.files.mcp_logs
    return McpServer(spec, workspace=settings.workspace, log_dir=logs, timeout_s=20)


async def _stats(server: McpServer) -> dict[str, Any]:
    tool = next(t for t in server.tools if t.name == "notes__token_stats")
    call = {"type": "tool_call", "name": tool.name, "id": "c1", "args": {}}
    return dict(json.loads((await tool.ainvoke(call)).content))


async def _configure(settings: Settings, url: str) -> None:
    """An `mcp.json` naming the server `notes` at `url`."""
    await asyncio.to_thread(settings.data_dir.mkdir, parents=True, exist_ok=True)
    await asyncio.to_thread(write_config, settings.mcp_config_path, notes={"url": url})


async def _stored(path: Path) -> dict[str, Any]:
    return dict(json.loads(await asyncio.to_thread(path.read_text, encoding="utf-8")))


async def _mode(path: Path) -> int:
    return stat.S_IMODE((await asyncio.to_thread(os.stat, path)).st_mode)


async def _exists(path: Path) -> bool:
    return await asyncio.to_thread(path.exists)


@pytest.mark.slow
async def test_login_stores_the_token_privately_and_a_turn_refreshes_it(
    settings: Settings, oauth_url: str
) -> None:
    await _configure(settings, oauth_url)
    code, printed = await _login(settings, "notes")
    assert code == 0, printed
    token_path = settings.files.mcp_logs / "oauth" / "notes.json"
    assert "[ok  ] notes: authorized, " in printed
    assert f"; token stored in {token_path}" in printed
    assert await _mode(token_path) == 0o600
    assert await _mode(token_path.parent) == 0o700
    first = await _stored(token_path)
    assert first["url"] == oauth_url and first["client_info"]["client_id"]
    assert first["tokens"]["access_token"] not in printed  # the token goes to the file only

    spec = ServerSpec(name="notes", url=oauth_url)
    server = _turn_server(settings, spec)
    try:
        await asyncio.sleep(TTL_S + 0.5)  # the login's token expired: the turn refreshes it
        await server.ensure()
        assert server.session is not None, server.error
        assert await _stats(server) == {"issued": 2, "refreshed": 1}
        await asyncio.sleep(TTL_S + 0.5)  # and again during the session
        assert await _stats(server) == {"issued": 3, "refreshed": 2}
    finally:
        await server.stop()
    last = await _stored(token_path)
    assert last["tokens"]["access_token"] != first["tokens"]["access_token"]
    assert await _mode(token_path) == 0o600
    leftovers = await asyncio.to_thread(lambda: list(token_path.parent.glob(".*.new")))
    assert not leftovers  # replaced whole, nothing left over


@pytest.mark.slow
async def test_without_a_login_the_turn_says_to_run_login(
    settings: Settings, oauth_url: str
) -> None:
    server = _turn_server(settings, ServerSpec(name="notes", url=oauth_url))
    try:
        await server.ensure()
    finally:
        await server.stop()
    assert server.state == "failed"
    assert server.error == NEEDS_NOTES_LOGIN
    assert not await _exists(settings.files.mcp_logs / "oauth" / "notes.json")  # none registered


@pytest.mark.slow
async def test_a_token_of_another_url_is_not_sent(settings: Settings, oauth_url: str) -> None:
    await _configure(settings, oauth_url)
    code, printed = await _login(settings, "notes")
    assert code == 0, printed
    moved = oauth_url.replace("127.0.0.1", "localhost")  # the config now names another URL
    server = _turn_server(settings, ServerSpec(name="notes", url=moved))
    try:
        await server.ensure()
    finally:
        await server.stop()
    assert server.error == NEEDS_NOTES_LOGIN


@pytest.mark.slow
async def test_logout_forgets_the_tokens(settings: Settings, oauth_url: str) -> None:
    await _configure(settings, oauth_url)
    assert (await _login(settings, "notes"))[0] == 0
    proc = await start_cli("mcp", "logout", "notes", env=cli_env(settings), cwd=settings.workspace)
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0
    assert "notes: forgot its tokens" in out.decode()
    assert not await _exists(settings.files.mcp_logs / "oauth" / "notes.json")


async def test_the_loopback_listener_takes_only_its_own_state() -> None:
    listener = LoopbackCallback()
    uri = await listener.open()
    listener.expect("the-state")
    try:
        async with await _browser() as browser:
            stray = await browser.get(uri, params={"code": "c0", "state": "another"})
            assert stray.status_code == 400  # a stale tab or another page: still waiting
            other = await browser.get(uri.replace("/callback", "/favicon.ico"))
            assert other.status_code == 404
            right = await browser.get(uri, params={"code": "c1", "state": "the-state"})
            assert right.status_code == 200
        assert await listener.wait(5) == ("c1", "the-state", None)
    finally:
        await listener.close()
