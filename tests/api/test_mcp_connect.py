"""Connecting an MCP server behind OAuth from the web chat's API, against a real OAuth server.

The served DuckLM names `notes` (tests/support/oauth_mcp_server.py on loopback, which
approves at once) and a stdio server. The test is the person's browser: a bare HTTP
client without the token follows the authorization URL to the authorization server,
whose redirect names DuckLM's own callback; only the one-time state lets it in.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
import pytest

from ducklm.config.settings import Settings
from ducklm.mcp import connect
from tests.support.mcp_servers import oauth_server, python_server, write_config
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served

pytestmark = pytest.mark.slow

QUIET = {"critic": False, "memory": False}
CALLBACK = "/v1/mcp/oauth/callback"


@pytest.fixture
async def oauth_url() -> AsyncIterator[str]:
    """A server behind OAuth whose tokens live long enough for the test."""
    async with oauth_server(60) as url:
        yield url


@pytest.fixture
async def server_settings(settings: Settings, tmp_path: Path, oauth_url: str) -> Settings:
    config = await asyncio.to_thread(
        write_config, tmp_path / "mcp.json", notes={"url": oauth_url}, local=python_server()
    )
    return settings.model_copy(update={"mcp_config": config})


@pytest.fixture
async def browser() -> AsyncIterator[httpx.AsyncClient]:
    """The person's browser: no token, redirects looked at one by one."""
    # Made in a thread: an httpx client loads the CA bundle from disk.
    client = await asyncio.to_thread(httpx.AsyncClient, timeout=60)
    async with client:
        yield client


def _token_file(settings: Settings) -> Path:
    return settings.files.mcp_logs / "oauth" / "notes.json"


async def _stored(path: Path) -> dict[str, Any]:
    try:
        text = await asyncio.to_thread(path.read_text, encoding="utf-8")
    except FileNotFoundError:
        return {}
    return dict(json.loads(text))


async def _notes(served: Served) -> dict[str, Any]:
    servers = (await served.client.get("/v1/mcp/servers")).json()["servers"]
    return next(s for s in servers if s["name"] == "notes")


async def _redirect_back(served: Served, browser: httpx.AsyncClient) -> str:
    """Press Connect, open the URL: where the authorization server sends the browser."""
    started = await served.client.post("/v1/mcp/servers/notes/connect")
    assert started.status_code == 200, started.text
    approved = await browser.get(started.json()["authorization_url"])
    assert approved.status_code == 302, approved.text
    back = approved.headers["location"]
    assert back.startswith(f"{served.url}{CALLBACK}?")  # DuckLM's own URL, as the browser used
    return back


def _with(url: str, **changes: str) -> str:
    parts = urlsplit(url)
    query = {**dict(parse_qsl(parts.query)), **changes}
    return parts._replace(query=urlencode(query)).geturl()


async def test_connect_signs_in_through_duck_lms_own_callback(
    served: Served,
    server_settings: Settings,
    oauth_url: str,
    llm: ScriptedLLM,
    browser: httpx.AsyncClient,
) -> None:
    llm.script(reply("Quack."))
    assert (await served.client.post("/v1/chat", json={"message": "hi", **QUIET})).is_success
    notes = await _notes(served)  # the turn found it wants a sign-in
    assert notes["state"] == "failed" and notes["needs_sign_in"] is True

    back = await _redirect_back(served, browser)
    token_path = _token_file(server_settings)
    stray = await browser.get(_with(back, state="not-the-state"))
    assert stray.status_code == 400
    assert "unknown, expired or already used" in stray.text
    assert "tokens" not in await _stored(token_path)  # nothing stored for a wrong state

    page = await browser.get(back)
    assert page.status_code == 200, page.text
    assert "DuckLM is connected to MCP server &#x27;notes&#x27; (" in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'self'")
    stored = await _stored(token_path)
    assert stored["tokens"]["access_token"] and stored["url"] == oauth_url
    assert stat.S_IMODE((await asyncio.to_thread(os.stat, token_path)).st_mode) == 0o600

    notes = await _notes(served)  # started again with the token: its tools are there now
    assert notes["state"] == "running" and notes["tools"] >= 1
    assert f"({notes['tools']} tools). You can close this tab." in page.text
    assert notes["needs_sign_in"] is False

    replayed = await browser.get(back)  # the state is single-use
    assert replayed.status_code == 400
    assert await _stored(token_path) == stored


async def test_a_refusal_or_an_expired_state_stores_no_token(
    served: Served,
    server_settings: Settings,
    browser: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    back = await _redirect_back(served, browser)
    refused = await browser.get(_with(back, code="", error="access_denied"))
    assert refused.status_code == 502
    assert "could not connect to MCP server &#x27;notes&#x27;" in refused.text
    assert "access_denied" in refused.text
    assert "tokens" not in await _stored(_token_file(server_settings))

    monkeypatch.setattr(connect, "TTL_S", 0.5)
    back = await _redirect_back(served, browser)
    await asyncio.sleep(1)
    late = await browser.get(back)
    assert late.status_code == 400
    assert "tokens" not in await _stored(_token_file(server_settings))
    assert (await _notes(served))["state"] != "running"


async def test_connect_is_behind_the_token_and_for_oauth_servers_only(
    served: Served, browser: httpx.AsyncClient
) -> None:
    bare = await browser.post(f"{served.url}/v1/mcp/servers/notes/connect")
    assert bare.status_code == 401
    local = await served.client.post("/v1/mcp/servers/local/connect")
    assert local.status_code == 409
    assert local.json()["detail"] == (
        "MCP server 'local' is not one a person signs in to: it is a stdio server"
    )
    missing = await served.client.post("/v1/mcp/servers/nope/connect")
    assert missing.status_code == 404
    assert missing.json()["detail"] == "no enabled MCP server named 'nope'"
    nothing = await browser.get(f"{served.url}{CALLBACK}")
    assert nothing.status_code == 400
