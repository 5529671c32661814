"""llama-server's `GET /props`, asked once per server and kept for every reader.

Two things read it: what the server accepts (`ducklm.models.capabilities`: the chat
template's tools) and the window it serves (`ducklm.models.context_size`: `n_ctx`).
Both ask at a turn's first use of the server; one `ServerProps` shared by both makes that
one request, not two.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from ducklm.models.tokens import root_url

PROBE_TIMEOUT_S = 2.0
"""The longest `/props` may take: a server that says nothing in time says nothing."""


class ServerProps:
    """Each server's `/props` answer, by root URL: asked at the first call, then kept."""

    def __init__(self) -> None:
        self._known: dict[str, Any] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def of(
        self, base_url: str, client: httpx.AsyncClient | None = None, *,
        timeout_s: float = PROBE_TIMEOUT_S,
    ) -> Any:  # fmt: skip
        """The JSON `/props` answered with 200; None for any other answer (not llama-server).

        Args:
            base_url: The server's OpenAI base URL (its root is asked).
            client: The client to ask with; a client of its own when None.
            timeout_s: The limit for a client of its own.

        Raises:
            httpx.TransportError: Nothing answered (not up yet): asked again next time.
        """
        key = root_url(base_url)
        if key in self._known:
            return self._known[key]
        async with self._locks.setdefault(key, asyncio.Lock()):
            if key not in self._known:
                self._known[key] = await _ask(key, client, timeout_s)
        return self._known[key]


async def _ask(root: str, client: httpx.AsyncClient | None, timeout_s: float) -> Any:
    if client is None:
        # Building a client loads the CA bundle from disk: off the event loop.
        own = await asyncio.to_thread(httpx.AsyncClient, timeout=timeout_s)
        async with own:
            return await _ask(root, own, timeout_s)
    response = await client.get(f"{root}/props")
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None
