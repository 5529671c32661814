"""An app served the way `ducklm serve` serves it (`uvicorn_config`), on a free loopback port.

`tests/support/server.py` serves the real app under uvicorn's defaults; the HTTP door's
own parts (the h11 protocol with deadlines, the log filter) come with `uvicorn_config`
only, so the door's tests serve through it. Raw sockets send what httpx would fix.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Literal

import uvicorn

from ducklm.cli.server import uvicorn_config
from ducklm.config.settings import Settings


@asynccontextmanager
async def door(
    app: Any, settings: Settings, *, lifespan: Literal["on", "off"] = "off"
) -> AsyncIterator[int]:
    """Serve `app` through `ducklm serve`'s uvicorn config until the block ends; its port."""
    config = uvicorn_config(app, settings, host="127.0.0.1", port=0)
    config.lifespan = lifespan
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    for _ in range(3000):  # 30 s at most
        if server.started or task.done():
            break
        await asyncio.sleep(0.01)
    if not server.started:
        if task.done():
            task.result()  # startup failed: raise its error here
        task.cancel()
        raise AssertionError("the server did not start within 30 s")
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        await task


async def exchange(port: int, request: bytes, *, timeout_s: float = 20) -> bytes:
    """Send `request` as bytes and read until the server closes (or `timeout_s`)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), timeout=timeout_s)
    finally:
        writer.close()


@contextmanager
def log_lines(name: str) -> Iterator[list[str]]:
    """Every message logged to logger `name` within the block, as its handlers see it."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    logger = logging.getLogger(name)
    handler = Keep(logging.DEBUG)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
