"""The roles' HTTP client over real HTTP: no cookies, a silent stream ends, the body as built."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI

from ducklm.models.clients import CookielessClient, LocalChatOpenAI, ModelRoles
from ducklm.models.roles import load_roles
from ducklm.tools.registry import default_tools
from tests.support.scripted_llm import ScriptedLLM, reply


class CookieServer:
    """Sets a cookie on every answer and records the `Cookie` header of each request."""

    def __init__(self) -> None:
        self.sent: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.sent.append(self.headers.get("Cookie"))
                self.send_response(200)
                self.send_header("Set-Cookie", "affinity=node-1; Path=/")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}/v1/models"
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def cookie_server() -> Iterator[CookieServer]:
    server = CookieServer()
    yield server
    server.close()


async def test_set_cookie_is_neither_kept_nor_sent_back(cookie_server: CookieServer) -> None:
    async with CookielessClient() as http:
        for _ in range(2):
            answer = await http.get(cookie_server.url)
            assert answer.status_code == 200
            assert answer.headers["set-cookie"].startswith("affinity=")
        assert len(http.cookies) == 0
    assert cookie_server.sent == [None, None]


async def test_a_plain_client_would_send_it_back(cookie_server: CookieServer) -> None:
    # The control: without the change the server's cookie comes back on the next request.
    async with httpx.AsyncClient() as http:
        for _ in range(2):
            await http.get(cookie_server.url)
    assert cookie_server.sent == [None, "affinity=node-1"]


async def test_cookies_cannot_be_set_on_it() -> None:
    async with CookielessClient() as http:
        with pytest.raises(TypeError, match="no cookies"):
            http.cookies = {"a": "b"}


async def test_every_role_shares_it() -> None:
    roles = await asyncio.to_thread(ModelRoles.build, await asyncio.to_thread(load_roles))
    try:
        clients = {roles.chat(name).http_async_client for name in ("action", "thinker", "critic")}
        assert len(clients) == 1
        assert isinstance(clients.pop(), CookielessClient)
    finally:
        await roles.aclose()


async def test_a_stream_gone_silent_ends_at_the_roles_timeout(
    llm: ScriptedLLM, tmp_path: Path
) -> None:
    # The roles stream without langchain-openai's per-chunk timer (a task per token);
    # the request's own timeout must still end a stream whose server stops sending.
    models = tmp_path / "models.yaml"
    await asyncio.to_thread(
        models.write_text,
        f"defaults: {{base_url: {llm.base_url}, model: scripted, api_key: t, timeout_s: 0.5}}\n",
    )
    roles = await asyncio.to_thread(ModelRoles.build, await asyncio.to_thread(load_roles, models))
    llm.script(reply("one two three four", chunk_delay_s=5.0))
    try:
        with pytest.raises(openai.APITimeoutError):
            async with asyncio.timeout(4.0):  # a guard against hanging, not a measurement
                async for _ in roles.chat("thinker").astream("hi"):
                    pass
    finally:
        await roles.aclose()


async def test_the_request_on_the_wire_is_the_one_langchain_openai_builds(
    llm: ScriptedLLM,
) -> None:
    # Messages and tools skip the openai client's walk over its typed parameters
    # (`as_wire_json`); the body must be what the plain client sends, but `max_tokens`.
    tools = default_tools().tools
    call = {"name": "file_read", "args": {"path": "a.md"}, "id": "call_1", "type": "tool_call"}
    messages = [
        SystemMessage("You are DuckLM."),
        HumanMessage("read a.md"),
        AIMessage(content="", tool_calls=[call]),
        ToolMessage("# A\nsome text", tool_call_id="call_1"),
        HumanMessage([{"type": "text", "text": "and now?"}]),
    ]
    options = {
        "base_url": llm.base_url,
        "api_key": "t",
        "model": "scripted",
        "max_tokens": 64,
        "max_retries": 0,
        "extra_body": {"cache_prompt": True},
    }
    for client in (ChatOpenAI, LocalChatOpenAI):
        llm.script(reply("fine"))
        model = (await asyncio.to_thread(client, **options)).bind_tools(tools)
        async for _ in model.astream(messages):
            pass
    plain, ours = llm.requests
    assert plain.pop("max_completion_tokens") == ours.pop("max_tokens") == 64
    assert ours == plain
    assert len(ours["tools"]) == len(tools) and len(ours["messages"]) == len(messages)
    assert ours["cache_prompt"] is True
