"""Clients of DuckLM's own MCP server: `ducklm mcp serve` on stdio, `/mcp` over HTTP.

Both use the `mcp` SDK's client, as Claude Code or any other MCP host would, at the
revision asked: 2025-11-25 (`initialize`, the answer an `InitializeResult`) or
2026-07-28 (`server/discover`, a `DiscoverResult`). The stdio process is forked from the
zygote (`tests/support/forked_stdio.py`): the host's command, without its imports' seconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
from mcp import ClientSession
from mcp.client.session import LoggingFnT
from mcp.client.streamable_http import streamable_http_client
from mcp.types import DiscoverResult, InitializeResult, LoggingMessageNotificationParams

from tests.support.forked_stdio import stdio_streams

OLDER, CURRENT = "2025-11-25", "2026-07-28"
Opened = tuple[ClientSession, InitializeResult | DiscoverResult]


@asynccontextmanager
async def stdio_session(
    env: dict[str, str],
    cwd: Path,
    *,
    logs: list[LoggingMessageNotificationParams] | None = None,
    revision: str = OLDER,
) -> AsyncIterator[Opened]:
    """A started `ducklm mcp serve` process and a session with it at `revision`.

    The server's log messages are added to `logs`, when given.
    """
    async with (
        stdio_streams(env, cwd) as (read, write),
        ClientSession(read, write, logging_callback=_keeper(logs)) as session,
    ):
        yield session, await _open(session, revision)


@asynccontextmanager
async def http_session(
    url: str,
    headers: dict[str, str],
    *,
    logs: list[LoggingMessageNotificationParams] | None = None,
    revision: str = OLDER,
) -> AsyncIterator[Opened]:
    """A session with the streamable-HTTP endpoint at `url` (`logs`, `revision` as above)."""
    client = await asyncio.to_thread(httpx2.AsyncClient, headers=headers, timeout=60)
    async with (
        client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write, logging_callback=_keeper(logs)) as session,
    ):
        yield session, await _open(session, revision)


async def _open(session: ClientSession, revision: str) -> InitializeResult | DiscoverResult:
    return await (session.discover() if revision == CURRENT else session.initialize())


def _keeper(logs: list[LoggingMessageNotificationParams] | None) -> LoggingFnT | None:
    """A logging callback that keeps each message in `logs` (none without a list)."""
    if logs is None:
        return None

    async def keep(params: LoggingMessageNotificationParams) -> None:
        logs.append(params)

    return keep
