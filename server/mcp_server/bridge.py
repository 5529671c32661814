"""Two MCP transports joined: every message one side reads, the other side sends.

`ducklm mcp serve` uses it to go through a running `ducklm serve` (stdio to its `/mcp`),
so questions wait for the person in the web chat there. Messages pass untouched: the
two ends speak MCP with each other, the bridge only carries it. Only what HTTP adds is
added: a 2026-07-28 request's envelope names its revision, method and name, which the
streamable-HTTP transport must also send as headers (`MCP-Protocol-Version`,
`Mcp-Method`, `Mcp-Name`); without them `/mcp` took it for a 2025-11-25 request.
"""

from __future__ import annotations

import logging

import anyio
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
    encode_header_value,
)
from mcp.shared.message import ClientMessageMetadata, SessionMessage
from mcp.types import PROTOCOL_VERSION_META_KEY, JSONRPCRequest

log = logging.getLogger(__name__)

Reading = ReadStream[SessionMessage | Exception]
Writing = WriteStream[SessionMessage]


async def bridge(client: tuple[Reading, Writing], server: tuple[Reading, Writing]) -> None:
    """Carry messages both ways until either side ends; the client's, stamped for HTTP.

    Both sinks are closed at the end: each transport's writer waits for its stream's end,
    so a host that closed stdin would otherwise leave the process running.
    """
    async with client[1], server[1], anyio.create_task_group() as group:

        async def carry(source: Reading, sink: Writing, to_http: bool) -> None:
            async for item in source:
                if isinstance(item, Exception):  # a line that was no JSON-RPC message
                    log.warning("MCP bridge dropped an unreadable message: %s", item)
                    continue
                await sink.send(with_headers(item) if to_http else item)
            group.cancel_scope.cancel()  # one side ended: so does the bridge

        group.start_soon(carry, client[0], server[1], True)
        group.start_soon(carry, server[0], client[1], False)


def with_headers(item: SessionMessage) -> SessionMessage:
    """A 2026-07-28 request with the headers its envelope implies; any other as it is."""
    message = item.message
    if not isinstance(message, JSONRPCRequest) or item.metadata is not None:
        return item
    params = message.params or {}
    meta = params.get("_meta")
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    if not isinstance(version, str):  # 2025-11-25: the session carries the revision
        return item
    headers = {MCP_PROTOCOL_VERSION_HEADER: version, MCP_METHOD_HEADER: message.method}
    name = params.get(NAME_BEARING_METHODS.get(message.method, ""))
    if isinstance(name, str):
        headers[MCP_NAME_HEADER] = encode_header_value(name)
    return SessionMessage(message, metadata=ClientMessageMetadata(headers=headers))
