"""A run's DuckLM events and graph chunks as the LangGraph server streams them.

The run is a hub task (`runs/execution.py`); this module only maps what it publishes
(`LiveTask.follow_wire`) to the LangGraph server's events (`langgraph_api/stream.py`);
`streaming/joining.py` numbers them and follows a run from where a client asks:

- `metadata`: `{"run_id", "attempt"}`, first (`streaming/joining.py`); `run_id` is the run's id
  (`ducklm/stores/agent_protocol/runs.py`).
- `values`, `updates`: the graph's own chunks of those modes, untouched (the state after
  each step; `{node: update}`; at a question `__interrupt__`, as LangGraph adds it).
- `messages` (mode `messages-tuple`): `[message chunk, metadata]` per token, the graph's.
- `messages/metadata`, `messages/partial`, `messages/complete` (mode `messages`): the
  message so far, accumulated per message id from the same chunks.
- `custom`: every DuckLM event of the run (`ducklm/kit/events.py`), stamped by the runner
  with `task_id`, `run_id` and (audited ones) `seq`: from `run_started` to `done`.
- `debug`: the graph's `checkpoint`, `task` and `task_result` chunks, a checkpoint's
  payload completed as the LangGraph server does it (`streaming/debug.py`).
- `tasks`, `checkpoints`: the graph's own chunks of those modes, untouched, as the
  LangGraph server forwards them (a task's start and its result; each checkpoint's
  `config`, `parent_config`, `values`, `metadata`, `next` and `tasks`).
- `events`: LangChain's `astream_events` (v2) of the graph's run, every event but the
  root graph's `on_chain_stream` (whose chunks are the other modes), as the LangGraph
  server streams them (`ducklm/runtime/graph_stream.py`).
- With `stream_subgraphs`, a subgraph's chunks of those modes are `mode|namespace`
  (`messages|ns` for `messages-tuple`); the root graph's keep their mode's name.
- `error`: the runner's fatal `error` event as `{"error", "message"}`; then the end.

The stream ends without an `end` event, as the LangGraph server's does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Iterable, Iterator
from typing import Any, NamedTuple, cast

from langchain_core.messages import BaseMessage, BaseMessageChunk, message_chunk_to_message
from sse_starlette import EventSourceResponse, ServerSentEvent

from ducklm.kit.events import Event
from ducklm.server.agent_protocol.common.schemas import StreamMode
from ducklm.server.agent_protocol.common.wire import dumps
from ducklm.server.agent_protocol.streaming.debug import debug_payload
from ducklm.server.tasks import Chunk

INTERRUPT = "__interrupt__"
KEEPALIVE_S = 5.0
"""`runs/wait` sends a newline this often while it waits, so proxies keep the connection."""
FAILED = "RunFailed"


class WireEvent(NamedTuple):
    """One event, already encoded: a run's state is read when it happens, not later."""

    event: str
    json: str
    interrupted: bool = False
    """Whether the payload carries `__interrupt__` (what `runs/wait` returns)."""
    id: str | None = None
    """Its place in the run's stream (`streaming/joining.py`), sent as the SSE event's id."""


def graph_modes(modes: tuple[StreamMode, ...]) -> frozenset[str]:
    """The graph stream modes the runner must hand over for `modes`.

    `custom` is DuckLM's events, which every run has; `events` is not a graph mode but a
    way of running the graph (`GraphOptions.watch_events`).
    """
    wanted = {"messages" if m.startswith("messages") else m for m in modes}
    return frozenset(wanted - {"custom", "events"})


async def map_items(
    items: AsyncIterator[Event | Chunk], modes: tuple[StreamMode, ...]
) -> AsyncIterator[tuple[str, Any]]:
    """The LangGraph events (name, payload) of a run's items, for a run of `modes`."""
    mapper = _Mapper(modes)
    async for item in items:
        for mapped in mapper.map(item):
            yield mapped


def count_events(items: Iterable[Event | Chunk], modes: tuple[StreamMode, ...]) -> int:
    """How many LangGraph events `items` give, for a run of `modes`."""
    mapper = _Mapper(modes)
    return sum(1 for item in items for _ in mapper.map(item))


class _Mapper:
    """One stream's mapping from the run's items to LangGraph events."""

    def __init__(self, modes: tuple[StreamMode, ...]) -> None:
        self._modes = modes
        self._messages = _Messages() if "messages" in modes else None

    def map(self, item: Event | Chunk) -> Iterator[tuple[str, Any]]:
        if isinstance(item, Chunk):
            yield from self._chunk(item)
        elif item.get("type") == "error" and item.get("fatal"):
            yield "error", {"error": FAILED, "message": item.get("message", "")}
        elif "custom" in self._modes:
            yield "custom", item

    def _chunk(self, chunk: Chunk) -> Iterator[tuple[str, Any]]:
        if chunk.mode != "messages":
            data = debug_payload(chunk.data) if chunk.mode == "debug" else chunk.data
            yield named(chunk.mode, chunk.namespace), data
            return
        if "messages-tuple" in self._modes:
            yield named("messages", chunk.namespace), chunk.data
        if self._messages is not None:  # accumulated by message id, whichever graph
            yield from self._messages.add(cast(Any, chunk.data))


def named(mode: str, namespace: tuple[str, ...]) -> str:
    """The event a chunk of `mode` is: `mode`, or `mode|ns...` for a subgraph's."""
    return "|".join((mode, *namespace))


def sse_response(events: AsyncIterator[WireEvent], headers: dict[str, str]) -> EventSourceResponse:
    """The events as `text/event-stream`."""

    async def body() -> AsyncIterator[ServerSentEvent]:
        async for item in events:
            yield ServerSentEvent(data=item.json, event=item.event, id=item.id)

    return EventSourceResponse(body(), headers=headers)


async def wait_body(events: AsyncIterator[WireEvent]) -> AsyncIterator[bytes]:
    """The run's result as JSON (newlines first while it runs; JSON readers skip them).

    The result is the last `values`, or the state with `__interrupt__` when the run
    stopped at a question, or `{"__error__": {"error", "message"}}` when it failed.
    """
    async for chunk in keepalive_json(_result(events)):
        yield chunk


async def keepalive_json(json_text: Awaitable[str]) -> AsyncIterator[bytes]:
    """`json_text` once it is there, newlines before it while it is awaited."""
    result = asyncio.ensure_future(json_text)
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


def encode(event: str, payload: Any, event_id: str | None = None) -> WireEvent:
    """`payload` as the event `event` (with its id in the run's stream, if it has one)."""
    interrupted = isinstance(payload, dict) and bool(payload.get(INTERRUPT))
    return WireEvent(event, dumps(payload), interrupted, event_id)


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
