"""One run's stream: the graph's chunks and the nodes' events, merged on the event loop.

LangGraph's `custom` stream hands every item to the loop with `call_soon_threadsafe`,
even from the loop's own thread: each event writes a byte to the loop's self-pipe and
wakes it once more, and with a `custom` mode the graph runs every superstep through a
waiter task so it can pass them on mid-step. DuckLM's nodes run on the loop, so the
runner gives them this channel instead (`DuckContext.events`): an event is a
`put_nowait` on a loop-local queue, and the graph streams only the modes the runner
reads. A run outside the runner (Studio, `langgraph dev`) has no channel, and `emit`
uses LangGraph's writer as before.

The graph runs in a task of its own (`pump`) that feeds the same queue, so tokens reach
the reader while a node still runs.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any, NamedTuple

from ducklm.kit.events import Event


class GraphChunk(NamedTuple):
    """One chunk of the graph's stream: its mode and data."""

    mode: str
    data: Any
    namespace: tuple[str, ...] = ()
    """The subgraph it comes from (`"node:task_id"` per level); `()`: the root graph."""


class _End(NamedTuple):
    error: BaseException | None


class RunChannel:
    """The queue a run's reader drains: events from nodes, chunks from the graph's task."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Event | GraphChunk | _End] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()

    def put(self, item: Event) -> None:
        """Hand an event to the reader; never blocks (a sink for `DuckContext.events`)."""
        if threading.get_ident() == self._thread:
            self._queue.put_nowait(item)
        else:  # a node's helper on a worker thread: the queue belongs to the loop
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)

    async def pump(self, chunks: AsyncIterator[GraphChunk]) -> None:
        """Feed the graph's chunks into the queue, then its end (and error)."""
        try:
            async for chunk in chunks:
                self._queue.put_nowait(chunk)
        except Exception as exc:  # the reader raises it where the run's failures are handled
            self._queue.put_nowait(_End(exc))
        except BaseException as exc:  # cancelled: a reader still waiting must not hang
            self._queue.put_nowait(_End(exc))
            raise
        else:
            self._queue.put_nowait(_End(None))

    async def items(self) -> AsyncIterator[Event | GraphChunk]:
        """Events and chunks in the order they came, until the graph's stream ended.

        Raises:
            Exception: What the graph's stream raised, after every item before it.
        """
        while not isinstance(item := await self._queue.get(), _End):
            yield item
        if item.error is not None:
            raise item.error
