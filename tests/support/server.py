"""DuckLM's real server on a free loopback port, in the test's own event loop.

Serving in the test's loop (not a thread) keeps blockbuster watching the server's code
too: a blocking call in a route fails the test like one in the test itself.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from ducklm.config.settings import Settings
from ducklm.server import create_app

TOKEN = "test-token-0123456789abcdef"


@dataclass
class Served:
    """A running server: its base URL, its token, and a client that sends the token."""

    url: str
    token: str
    client: httpx.AsyncClient
    server: uvicorn.Server

    @property
    def headers(self) -> dict[str, str]:
        """The bearer header."""
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def cookie_name(self) -> str:
        """The name of this server's browser-session cookie (it names the port)."""
        return f"ducklm_session_{self.server.servers[0].sockets[0].getsockname()[1]}"

    async def login_url(self) -> str:
        """A fresh one-time login URL, the way `ducklm open` gets one."""
        response = await self.client.post("/v1/login-codes")
        response.raise_for_status()
        url: str = response.json()["url"]
        return url


@asynccontextmanager
async def serve(settings: Settings, *, port: int = 0) -> AsyncIterator[Served]:
    """Serve `create_app(settings)` on 127.0.0.1 at a free port until the block ends.

    `port`: the port an earlier `serve` was given, to restart on it (a browser keeps
    its cookies per host and port); never a fixed number.
    """
    if settings.api_token is None:
        settings = settings.model_copy(update={"api_token": TOKEN})
    # The factory checks the web chat's folder on disk: not on the loop.
    app = await asyncio.to_thread(create_app, settings)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
        # uvicorn drops an idle connection after 5 s; a pooled client (`requests` in the
        # fuzz) that sends on it just as it closes reads "connection reset" (CI, under
        # load, between two operations). A test's connections live as long as its server.
        timeout_keep_alive=3600,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()  # startup failed: raise its error here
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    token = settings.api_token or TOKEN
    client = await asyncio.to_thread(
        httpx.AsyncClient,
        base_url=url,
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    try:
        yield Served(url, token, client, server)
    finally:
        await client.aclose()
        server.should_exit = True
        await task


async def sse_events(response: httpx.Response) -> list[dict[str, Any]]:
    """Read an SSE response to its end; each event's JSON data, with its SSE name checked."""
    events: list[dict[str, Any]] = []
    name = None
    async for line in response.aiter_lines():
        if line.startswith("event:"):
            name = line.removeprefix("event:").strip()
        elif line.startswith("data:"):
            item = json.loads(line.removeprefix("data:").strip())
            assert item["type"] == name, (item, name)
            events.append(item)
    return events


async def stream(served: Served, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """POST `body` to an SSE route and collect its events (raises on a non-2xx answer)."""
    async with served.client.stream("POST", path, json=body) as response:
        if response.status_code >= 400:
            await response.aread()
            response.raise_for_status()
        return await sse_events(response)


@asynccontextmanager
async def sdk_client(served: Served) -> AsyncIterator[LangGraphClient]:
    """The official langgraph-sdk client of `served`, sending the test token."""
    # api_key=None: never pick up a LangSmith key from the environment.
    sdk = await asyncio.to_thread(get_client, url=served.url, api_key=None, headers=served.headers)
    async with sdk:
        yield sdk
