"""The graph's stream as the LangGraph server sends it (`langgraph_api/stream.py`).

Event names and payloads:

- `metadata`: `{"run_id", "attempt"}`, first.
- `values`: the whole state after each step; at an interrupt, the state plus
  `"__interrupt__": [{"value", "id", "response_schema"}]` (LangGraph adds it itself).
- `updates`: `{node: update}` per step, `{"__interrupt__": [...]}` at an interrupt.
- `messages` (mode `messages-tuple`): `[message chunk, metadata]` per token.
- `messages/metadata`, `messages/partial`, `messages/complete` (mode `messages`): the
  message so far, accumulated per message id.
- `custom`: whatever nodes write to the stream writer: DuckLM's events.
- `error`: `{"error", "message"}`, the message for people; the stream then ends.

The stream ends without an `end` event, as the LangGraph server's does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any, NamedTuple, cast

from langchain_core.messages import BaseMessage, BaseMessageChunk, message_chunk_to_message
from sse_starlette import EventSourceResponse, ServerSentEvent

from ducklm.graph.builder import DuckGraph
from ducklm.server.agent_protocol.run_spec import RunSpec
from ducklm.server.agent_protocol.wire import dumps, error_payload

log = logging.getLogger(__name__)

INTERRUPT = "__interrupt__"
KEEPALIVE_S = 5.0
"""`runs/wait` sends a newline this often while it waits, so proxies keep the connection."""


class WireEvent(NamedTuple):
    """One event, already encoded: a run's state is read when it happens, not later."""

    event: str
    json: str
    interrupted: bool = False
    """Whether the payload carries `__interrupt__` (what `runs/wait` returns)."""


async def graph_events(graph: DuckGraph, spec: RunSpec) -> AsyncIterator[WireEvent]:
    """Run `spec` to its end and yield its events; a failure is an `error` event."""
    yield _encode("metadata", {"run_id": spec.run_id, "attempt": 1})
    modes = {"messages" if m.startswith("messages") else m for m in spec.stream_modes}
    messages = _Messages() if "messages" in spec.stream_modes else None
    try:
        async for mode, chunk in graph.astream(
            cast(Any, spec.graph_input),
            spec.config,
            context=spec.context,
            stream_mode=sorted(modes),  # type: ignore[arg-type]  # literals, checked by schema
            interrupt_before=spec.interrupt_before,
            interrupt_after=spec.interrupt_after,
        ):
            if mode != "messages":
                yield _encode(mode, chunk)
                continue
            if "messages-tuple" in spec.stream_modes:
                yield _encode("messages", chunk)
            if messages is not None:
                for name, payload in messages.add(cast(Any, chunk)):
                    yield _encode(name, payload)
    except Exception as exc:  # reported to the client as an event, never raised at it
        log.exception("agent protocol run %s on thread %s failed", spec.run_id, spec.thread_id)
        yield _encode("error", error_payload(exc))


def sse_response(events: AsyncIterator[WireEvent], headers: dict[str, str]) -> EventSourceResponse:
    """The events as `text/event-stream`."""

    async def body() -> AsyncIterator[ServerSentEvent]:
        async for item in events:
            yield ServerSentEvent(data=item.json, event=item.event)

    return EventSourceResponse(body(), headers=headers)


async def wait_body(events: AsyncIterator[WireEvent]) -> AsyncIterator[bytes]:
    """The run's result as JSON (newlines first while it runs; JSON readers skip them).

    The result is the last `values`, or the state with `__interrupt__` when the run
    stopped at a question, or `{"__error__": {"error", "message"}}` when it failed.
    """
    result = asyncio.ensure_future(_result(events))
    try:
        while not result.done():
            await asyncio.wait({result}, timeout=KEEPALIVE_S)
            if not result.done():
                yield b"\n"
        yield result.result().encode()
    finally:
        result.cancel()


async def _result(events: AsyncIterator[WireEvent]) -> str:
    # Read to the end even past an error: leaving early would look like a client that
    # left, and `on_disconnect: cancel` would cancel the run's last bookkeeping.
    latest, interrupted, failed = "{}", "", ""
    async for item in events:
        if item.event == "error":
            failed = f'{{"__error__":{item.json}}}'
        elif item.interrupted:
            interrupted = item.json
        elif item.event == "values":
            latest = item.json
    return failed or interrupted or latest


def _encode(event: str, payload: Any) -> WireEvent:
    interrupted = isinstance(payload, dict) and bool(payload.get(INTERRUPT))
    return WireEvent(event, dumps(payload), interrupted)


class _Messages:
    """Mode `messages`: each message accumulated from its chunks.

    As the LangGraph server does it: `messages/metadata` once per message id, then the
    message so far as `messages/partial` (a chunk) or `messages/complete`.
    """

    def __init__(self) -> None:
        self._seen: dict[str | None, BaseMessage] = {}

    def add(self, chunk: tuple[BaseMessage, dict[str, Any]]) -> Iterator[tuple[str, Any]]:
        message, metadata = chunk
        before = self._seen.get(message.id)
        if before is None:
            yield "messages/metadata", {message.id: {"metadata": metadata}}
        if isinstance(message, BaseMessageChunk) and isinstance(before, BaseMessageChunk):
            message = before + message
        self._seen[message.id] = message
        if isinstance(message, BaseMessageChunk):
            yield "messages/partial", [message]
        else:
            yield "messages/complete", [message_chunk_to_message(message)]
