"""Clients of DuckLM's own MCP server: `ducklm mcp serve` on stdio, `/mcp` over HTTP.

Both use the `mcp` SDK's client, as Claude Code or any other MCP host would. And
`served_over_http`: `ducklm mcp serve` behind a loopback URL, for the conformance suite.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import httpx
import uvicorn
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.fastmcp.server import StreamableHTTPASGIApp
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.types import InitializeResult
from starlette.applications import Starlette
from starlette.routing import Route

from ducklm.server.mcp_server.bridge import bridge

SERVE = ["-m", "ducklm.cli.main", "mcp", "serve"]


def serve_params(env: dict[str, str], cwd: Path) -> StdioServerParameters:
    """How an MCP host starts `ducklm mcp serve` (this interpreter, `env`, `cwd`)."""
    return StdioServerParameters(command=sys.executable, args=SERVE, env=env, cwd=cwd)


@asynccontextmanager
async def stdio_session(
    env: dict[str, str], cwd: Path
) -> AsyncIterator[tuple[ClientSession, InitializeResult]]:
    """A started `ducklm mcp serve` process and an initialized session with it."""
    async with (
        stdio_client(serve_params(env, cwd)) as (read, write),
        ClientSession(read, write) as session,
    ):
        yield session, await session.initialize()


@asynccontextmanager
async def http_session(
    url: str, headers: dict[str, str]
) -> AsyncIterator[tuple[ClientSession, InitializeResult]]:
    """An initialized session with the streamable-HTTP endpoint at `url`."""
    client = await asyncio.to_thread(httpx.AsyncClient, headers=headers, timeout=60)
    async with (
        client,
        streamable_http_client(url, http_client=client) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        yield session, await session.initialize()


class StdioRelay:
    """Stands where the SDK's HTTP session manager wants a `Server`: each MCP session
    it opens is carried to a `ducklm mcp serve` process of its own (a data dir each, so
    two sessions never share the memory store's lock)."""

    def __init__(self, env: dict[str, str], root: Path) -> None:
        self._env = env
        self._root = root
        self._sessions = 0

    def create_initialization_options(self) -> None:
        """Nothing: the process behind the relay answers `initialize` itself."""

    async def run(self, read: Any, write: Any, *_: Any, **__: Any) -> None:
        """Carry one session's messages to and from its own `ducklm mcp serve`."""
        self._sessions += 1
        place = self._root / f"session-{self._sessions}"
        await asyncio.to_thread(place.mkdir, parents=True)
        env = {**self._env, "DUCK_DATA_DIR": str(place / "data")}
        async with stdio_client(serve_params(env, place)) as (served_read, served_write):
            await bridge((read, write), (served_read, served_write))


@asynccontextmanager
async def served_over_http(env: dict[str, str], root: Path) -> AsyncIterator[str]:
    """`ducklm mcp serve` reachable over streamable HTTP on loopback; its URL.

    The conformance suite reaches servers by URL only. The relay answers on HTTP with
    the SDK's own transport and passes each message on untouched, so what the suite
    checks beyond the transport is `ducklm mcp serve`'s answer.
    """
    relay = StdioRelay(env, root)
    manager = StreamableHTTPSessionManager(app=cast("Any", relay))
    app = Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(manager))])
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    async with manager.run():
        task = asyncio.create_task(server.serve())
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.should_exit = True
            await task
