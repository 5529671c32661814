"""X-Forwarded-* is believed only from the proxies the person names (DUCK_TRUSTED_PROXIES).

uvicorn believes them from 127.0.0.1 by default, and every client of a local server is
on loopback, so any local program could make the app think a request came over https
from elsewhere. `ducklm serve`'s uvicorn config, on a real uvicorn server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import uvicorn

from ducklm.cli.server import uvicorn_config
from ducklm.config.settings import Settings

FORGED = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}


async def _echo(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = f"{scope['scheme']} {scope['client'][0]}".encode()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


@asynccontextmanager
async def _serving(settings: Settings) -> AsyncIterator[str]:
    config = uvicorn_config(_echo, settings, host="127.0.0.1", port=0)
    config.log_level = "warning"
    config.lifespan = "off"
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110  uvicorn has a flag, no event
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        await task


async def test_forwarded_headers_are_ignored_by_default(settings: Settings) -> None:
    async with _serving(settings) as url, httpx.AsyncClient() as client:
        seen = (await client.get(url, headers=FORGED)).text
    assert seen == "http 127.0.0.1"


async def test_a_named_proxy_is_believed(settings: Settings) -> None:
    trusting = settings.model_copy(update={"trusted_proxies": ["127.0.0.1"]})
    async with _serving(trusting) as url, httpx.AsyncClient() as client:
        seen = (await client.get(url, headers=FORGED)).text
    assert seen == "https 203.0.113.9"
