"""Runs belong to the server, not to the connection that started them.

Each run is an asyncio task that holds its thread through the task hub's `claim` (one
run at a time per thread, whichever door started it) and consumes the graph's stream to
its end. Its events go through a `RunHandle` to the client; a client that leaves stops
receiving them, and the run goes on unless it asked for `on_disconnect: "cancel"`. The
router's lifespan cancels what still runs when the server stops.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from ducklm.graph.builder import DuckGraph
from ducklm.server.agent_protocol.deps import ThreadClaims
from ducklm.server.agent_protocol.run_spec import RunSpec
from ducklm.server.agent_protocol.store import ThreadStore
from ducklm.server.agent_protocol.streaming import WireEvent, graph_events

log = logging.getLogger(__name__)


class RunHandle:
    """One run's events on their way to the client that started it."""

    def __init__(self, *, cancel_on_disconnect: bool) -> None:
        self.task: asyncio.Task[None] | None = None
        self._queue: asyncio.Queue[WireEvent | None] = asyncio.Queue()
        self._listening = True
        self._ended = False
        self._cancel_on_disconnect = cancel_on_disconnect

    def put(self, item: WireEvent | None) -> None:
        """Pass an event on (`None` ends the stream); dropped once the client has left."""
        if self._listening:
            self._queue.put_nowait(item)

    async def events(self) -> AsyncIterator[WireEvent]:
        """The run's events until it ends, for one reader."""
        try:
            while (item := await self._queue.get()) is not None:
                yield item
            self._ended = True
        finally:
            self._listening = False
            if self._cancel_on_disconnect and not self._ended and self.task is not None:
                self.task.cancel()


class ActiveRuns:
    """The door's runs in flight, by thread."""

    def __init__(self, threads: ThreadStore) -> None:
        self._threads = threads
        self._running: dict[str, str] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def is_running(self, thread_id: str) -> bool:
        """Whether a run of this door holds `thread_id` now."""
        return thread_id in self._running

    async def start(
        self, spec: RunSpec, *, graph: DuckGraph, hub: ThreadClaims, cancel_on_disconnect: bool
    ) -> RunHandle:
        """Claim the run's thread and start the run.

        Raises:
            ThreadBusy: The thread already runs (from this door or another).
        """
        handle = RunHandle(cancel_on_disconnect=cancel_on_disconnect)
        claimed = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._execute(spec, graph, hub, handle, claimed))
        handle.task = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        await asyncio.wait({claimed, task}, return_when=asyncio.FIRST_COMPLETED)
        if not claimed.done():
            task.result()  # what kept the claim from being taken: ThreadBusy
        return handle

    async def aclose(self) -> None:
        """Cancel the runs still going and wait for them."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _execute(
        self,
        spec: RunSpec,
        graph: DuckGraph,
        hub: ThreadClaims,
        handle: RunHandle,
        claimed: asyncio.Future[None],
    ) -> None:
        try:
            async with hub.claim(spec.thread_id):
                self._running[spec.thread_id] = spec.run_id
                claimed.set_result(None)
                try:
                    await self._drive(spec, graph, handle)
                finally:
                    del self._running[spec.thread_id]
        finally:
            handle.put(None)

    async def _drive(self, spec: RunSpec, graph: DuckGraph, handle: RunHandle) -> None:
        failure: dict[str, Any] | None = None
        try:
            if not spec.temporary:
                await self._threads.update(
                    spec.thread_id, metadata=spec.metadata, error=None, set_error=True
                )
            async for item in graph_events(graph, spec):
                handle.put(item)
                if item.event == "error":
                    failure = json.loads(item.json)
            if not spec.temporary:
                await self._threads.update(spec.thread_id, error=failure, set_error=True)
        except Exception:  # the run itself never raises; this is bookkeeping
            log.exception("agent protocol run %s: recording it failed", spec.run_id)
        finally:
            if spec.temporary and isinstance(graph.checkpointer, BaseCheckpointSaver):
                await asyncio.shield(graph.checkpointer.adelete_thread(spec.thread_id))
