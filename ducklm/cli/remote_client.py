"""The CLI's client of a `ducklm serve` running on the same data dir.

Beside a running server the CLI cannot open the embedded Qdrant (the server holds its
lock) and should not load a second copy of the graph and the embedding model: it sends
its commands to the server instead. This module finds that server and speaks its HTTP
API (docs/api.md). It stays light on purpose: httpx and the standard library only, so a
command that goes to the server starts without LangGraph, LangChain or torch.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import httpx

from ducklm.kit.token import load_token
from ducklm.runtime.server_file import read_server_file
from ducklm.stores.owner import pid_exists

if TYPE_CHECKING:
    from ducklm.config.settings import Settings

HEALTH_TIMEOUT_S = 5.0
# The server sends a heartbeat every 15 s, so a silent minute means it is gone.
STREAM_TIMEOUT = httpx.Timeout(10.0, read=60.0)
CALL_TIMEOUT = httpx.Timeout(10.0, read=120.0)


class ServerRefused(Exception):
    """The server answered a request with a 4xx: the command was wrong (exit code 2)."""


class ServerFailed(Exception):
    """The server failed (5xx) or stopped answering mid-command (exit code 1)."""


class DuckServer:
    """A running `ducklm serve`, with the API token of its data dir."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self._client = client

    @property
    def url(self) -> str:
        """The server's base URL."""
        return str(self._client.base_url).rstrip("/")

    async def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One request; its JSON answer (`None` for an empty one).

        Raises:
            ServerRefused: A 4xx, with the server's sentence.
            ServerFailed: A 5xx, or the server did not answer.
        """
        try:
            response = await self._client.request(method, path, timeout=CALL_TIMEOUT, **kwargs)
        except httpx.TransportError as exc:
            raise ServerFailed(f"the server at {self.url} did not answer ({exc!r})") from None
        _raise_for(response)
        return response.json() if response.content else None

    async def text(self, path: str, **kwargs: Any) -> str:
        """One GET whose answer is text, not JSON (an export); raises as `call`."""
        try:
            response = await self._client.get(path, timeout=CALL_TIMEOUT, **kwargs)
        except httpx.TransportError as exc:
            raise ServerFailed(f"the server at {self.url} did not answer ({exc!r})") from None
        _raise_for(response)
        return response.text

    async def events(self, path: str, body: dict[str, Any] | None) -> AsyncIterator[dict[str, Any]]:
        """POST `body` (JSON, or nothing) to an SSE endpoint; yield each event it sends.

        Raises:
            ServerRefused: The server refused to start the run (a 4xx).
            ServerFailed: A 5xx, or the connection ended before the run did.
        """
        try:
            async with self._client.stream(
                "POST", path, json=body, timeout=STREAM_TIMEOUT
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    _raise_for(response)
                async for item in _sse_data(response.aiter_lines()):
                    yield item
        except httpx.TransportError as exc:
            raise ServerFailed(f"lost the server at {self.url} ({exc!r})") from None


@asynccontextmanager
async def connect(settings: Settings) -> AsyncIterator[DuckServer | None]:
    """The server running on `settings.data_dir`, or `None` when none answers.

    `None` for: no `server.json`, a dead pid, no token, or no answer from `/health`
    (a server killed without cleaning up leaves its file behind).
    """
    running = await read_server_file(settings.data_dir)
    if running is None or not await asyncio.to_thread(pid_exists, running.pid):
        yield None
        return
    token = await load_token(settings, create=False)
    if not token:
        yield None
        return
    # trust_env off: the bearer token goes to this server, never to a configured proxy.
    # Built on a worker thread: creating the client reads the system's SSL files.
    client = await asyncio.to_thread(
        httpx.AsyncClient,
        base_url=running.url,
        headers={"Authorization": f"Bearer {token}"},
        trust_env=False,
    )
    async with client:
        yield DuckServer(client) if await _healthy(client) else None


async def _healthy(client: httpx.AsyncClient) -> bool:
    try:
        response = await client.get("/health", timeout=HEALTH_TIMEOUT_S)
    except httpx.HTTPError:
        return False
    return response.status_code == 200  # "degraded" only says a model server is down


def _raise_for(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    if response.status_code == 401:
        raise ServerRefused(
            "the server on this data dir refused this command's API token: does it use the "
            "same DUCK_API_TOKEN as this command?"
        )
    try:
        detail = str(response.json()["detail"])
    except (ValueError, KeyError, TypeError):
        detail = f"HTTP {response.status_code}"
    if response.status_code < 500:
        raise ServerRefused(detail)
    raise ServerFailed(f"the server failed: {detail}")


async def _sse_data(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    """The `data:` of each SSE event, parsed; comments (heartbeats) are skipped."""
    data: list[str] = []
    async for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            yield json.loads("\n".join(data))
            data = []
    if data:
        yield json.loads("\n".join(data))
