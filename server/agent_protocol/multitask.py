"""Double-texting: what a run asked for a busy thread does (`multitask_strategy`).

As the LangGraph server does it (`create_valid_run`, `Runs.cancel`):

- `reject` (the default): `409`, naming the running task.
- `enqueue`: the run is recorded as `pending` and starts when the thread is free, after
  the runs enqueued before it (first come, first run).
- `interrupt`: the running run (and any enqueued one) is cancelled and kept, listed as
  `interrupted`; then the new run starts.
- `rollback`: the running run (and any enqueued one) is cancelled and deleted with its
  checkpoints; then the new run starts.

"Busy" is a run of this server's hub on the thread, or a run enqueued here. A run of
another server on the same database is refused whatever the strategy (`409`): only that
server can wait for it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from ducklm.server.agent_protocol.joining import RunHandle
from ducklm.server.tasks import LiveTask, TaskHub, ThreadBusy

RETRY_S = 0.1
"""How often an enqueued run looks again at a thread held by something other than a run."""
WAITING = "thread {thread_id} waits for an answer: the enqueued run cannot start"

Starter = Callable[[], Awaitable[LiveTask]]
"""Starts an enqueued run's hub task (raises `ThreadBusy` while the thread is held)."""
Waiting = Callable[[], Awaitable[bool]]
"""Whether the thread waits at a question (then an enqueued new turn can never start)."""
Refused = Callable[[Exception], Awaitable[None]]
"""Records why an enqueued run could not start."""


class RunQueue:
    """The runs enqueued on each thread, oldest first, and the tasks that start them."""

    def __init__(self, hub: TaskHub) -> None:
        self._hub = hub
        self._queued: dict[str, list[RunHandle]] = {}
        self._starters: dict[str, asyncio.Task[None]] = {}

    def pending(self, thread_id: str) -> list[RunHandle]:
        """The runs enqueued on `thread_id`, oldest first."""
        return list(self._queued.get(thread_id, ()))

    def depth(self) -> int:
        """How many runs wait in this server's queue, on all threads (`/metrics`)."""
        return sum(len(queued) for queued in self._queued.values())

    def busy(self, thread_id: str) -> bool:
        """Whether a run of this server holds `thread_id` or waits for it."""
        return self._hub.is_busy(thread_id) or bool(self._queued.get(thread_id))

    def enqueue(
        self, handle: RunHandle, start: Starter, waiting: Waiting, refused: Refused
    ) -> None:
        """Start `handle`'s run once the thread is free and the runs before it started.

        `start` sets `handle.started`; a run that cannot start gets the exception there.
        """
        queued = self._queued.setdefault(handle.thread_id, [])
        before = queued[-1] if queued else None
        queued.append(handle)
        starter = asyncio.create_task(
            self._start_in_turn(handle, before, start, waiting, refused),
            name=f"ducklm-enqueued-{handle.run_id}",
        )
        self._starters[handle.run_id] = starter

    def drop(self, handle: RunHandle) -> bool:
        """Take an enqueued run out before it starts; `False` if it is not enqueued."""
        starter = self._starters.pop(handle.run_id, None)
        if starter is None:
            return False
        starter.cancel()
        self._remove(handle)
        if not handle.started.done():
            handle.started.cancel()
        return True

    async def close(self) -> None:
        """Drop every enqueued run (the server is stopping)."""
        for handles in list(self._queued.values()):
            for handle in list(handles):
                self.drop(handle)

    async def _start_in_turn(
        self,
        handle: RunHandle,
        before: RunHandle | None,
        start: Starter,
        waiting: Waiting,
        refused: Refused,
    ) -> None:
        try:
            if before is not None:  # its turn comes once the one before it has started
                await asyncio.wait([before.started])
            await self._start_when_free(handle.thread_id, start, waiting)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # refused for good: the run says why
            await refused(exc)
            if not handle.started.done():
                handle.started.set_exception(exc)
                handle.started.exception()  # a follower may never come: not an unseen error
        finally:
            self._starters.pop(handle.run_id, None)
            self._remove(handle)

    async def _start_when_free(self, thread_id: str, start: Starter, waiting: Waiting) -> LiveTask:
        while True:
            running = self._hub.live_in(thread_id)
            if running is not None:
                await running.finished.wait()
                continue
            with contextlib.suppress(ThreadBusy):
                return await start()
            if not self._hub.is_busy(thread_id) and await waiting():
                raise ThreadBusy(WAITING.format(thread_id=thread_id))
            await asyncio.sleep(RETRY_S)  # held by a claim, or by another server's run

    def _remove(self, handle: RunHandle) -> None:
        queued = self._queued.get(handle.thread_id, [])
        if handle in queued:
            queued.remove(handle)
        if not queued:
            self._queued.pop(handle.thread_id, None)
