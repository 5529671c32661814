"""`ducklm mcp serve`: DuckLM as an MCP server on stdio, for Claude Code, Goose and others.

With a `ducklm serve` running on the same data dir, the process only carries messages
to that server's `/mcp` (it holds the memory store, and its web chat is where the
person answers questions). Without one, DuckLM opens in this process; a turn that stops
at a question is then refused, since nobody can answer it (`ducklm.server.mcp_server`).

stdout is the protocol: anything else printed while serving goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys

import httpx2

from ducklm.cli.remote_client import connect
from ducklm.config.settings import Settings
from ducklm.kit.token import load_token

# A turn may think for long between two events; the SDK's default would cut it at 5 min.
RELAY_READ_TIMEOUT_S = 3600.0


async def cmd_mcp_serve(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm mcp serve`."""
    async with connect(settings) as running:
        if running is not None:
            token = await load_token(settings, create=False)
            assert token is not None  # `connect` finds a server only with the token
            await _relay(f"{running.url}/mcp", token)
            return 0
    await _serve_here(settings)
    return 0


async def _relay(url: str, token: str) -> None:
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415
    from mcp.server.stdio import stdio_server  # noqa: PLC0415

    from ducklm.server.mcp_server.bridge import bridge  # noqa: PLC0415

    # trust_env off: the bearer token goes to DuckLM's server, never to a configured proxy.
    # Built on a worker thread: creating the client reads the system's SSL files.
    client = await asyncio.to_thread(
        httpx2.AsyncClient,
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx2.Timeout(30.0, read=RELAY_READ_TIMEOUT_S),
        trust_env=False,
        follow_redirects=True,
    )
    async with (
        client,
        stdio_server() as (read, write),
        streamable_http_client(url, http_client=client) as (server_read, server_write),
    ):
        await bridge((read, write), (server_read, server_write))


async def _serve_here(settings: Settings) -> None:
    # The runtime, LangGraph and the SDK load here, and only here.
    from mcp.server.stdio import stdio_server  # noqa: PLC0415

    from ducklm.runtime.facade import DuckLM  # noqa: PLC0415
    from ducklm.server.mcp_server import McpDoor, build_server  # noqa: PLC0415
    from ducklm.server.tasks import TaskHub  # noqa: PLC0415

    async with stdio_server() as (read, write):
        # The transport holds the real stdout; a stray print must not corrupt it.
        with contextlib.redirect_stdout(sys.stderr):
            async with DuckLM.open(settings) as duck:
                hub = TaskHub(duck)
                try:
                    server = build_server(McpDoor(duck=duck, hub=hub, questions="refuse"))
                    await server.run(read, write, server.create_initialization_options())
                finally:
                    await hub.close()
