"""Two MCP transports joined: every message one side reads, the other side sends.

`ducklm mcp serve` uses it to go through a running `ducklm serve` (stdio to its `/mcp`),
so questions wait for the person in the web chat there. Messages pass untouched: the
two ends speak MCP with each other, the bridge only carries it.
"""

from __future__ import annotations

import logging

import anyio
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

Reading = ReadStream[SessionMessage | Exception]
Writing = WriteStream[SessionMessage]


async def bridge(one: tuple[Reading, Writing], other: tuple[Reading, Writing]) -> None:
    """Carry messages both ways until either side ends."""
    async with anyio.create_task_group() as group:

        async def carry(source: Reading, sink: Writing) -> None:
            async for item in source:
                if isinstance(item, Exception):  # a line that was no JSON-RPC message
                    log.warning("MCP bridge dropped an unreadable message: %s", item)
                    continue
                await sink.send(item)
            group.cancel_scope.cancel()  # one side ended: so does the bridge

        group.start_soon(carry, one[0], other[1])
        group.start_soon(carry, other[0], one[1])
