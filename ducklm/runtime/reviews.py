"""Review runs behind answered turns: the critic and memory policy after `done`.

A turn whose review runs behind it ends at its answer (`ducklm.runtime.runner`), and the
runner hands its recorded review run here. `Reviews` runs each thread's reviews in
order, one at a time, as a background task, and never makes a person wait for one:

- whatever needs the thread (a new message, a resume, a revert, a state update) holds
  it (`hold`): the review going on is stopped and recorded as deferred
  (`review_deferred`), and it runs again, from the start, once nothing holds the
  thread. A review's results land whole before the hold begins or not at all (the
  thread moved on), so nothing written under a hold is written past. It reviews the
  state at its answer (`ReviewRef.checkpoint_id`, read before anything else runs), so
  it judges its own turn whatever ran since;
- a person may skip a thread's reviews (`skip`), recorded as skipped by the person.

What stops a review for good is recorded, never lost: skipped by the person, stopped
(DuckLM closing, its conversation deleted) with `review_skipped`; one whose process died
is recorded as skipped by startup recovery (`ducklm.runtime.recovery`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Literal

from ducklm.kit.events import Event
from ducklm.runtime.runner import REVIEW_STOPPED, ReviewRef, ReviewStop
from ducklm.stores import ThreadRunning

log = logging.getLogger(__name__)

RunReview = Callable[[ReviewRef], AsyncIterator[Event]]
"""Streams a review run's events (`stream_review` with the graph and stores bound)."""
PinReview = Callable[[str], Awaitable[str | None]]
"""The thread's latest checkpoint id (`runner.answered_checkpoint` with the graph bound)."""
CloseReview = Callable[[ReviewRef, ReviewStop], Awaitable[bool]]
"""Records a stopped review (`runner.close_review` with the stores bound)."""

SKIPPED_BY_PERSON = "skipped by the person"
DEFERRED_FOR_MESSAGE = ReviewStop(True, "the conversation went on: it runs once that has ended")
DEFERRED_FOR_REVERT = ReviewStop(True, "a revert of the conversation: it runs once that is done")
DEFERRED_FOR_UPDATE = ReviewStop(True, "a state update of the conversation: it runs after it")
DEFERRED_FOR_EARLIER = ReviewStop(True, "an earlier review of the conversation runs first")
STOPPED = ReviewStop(False, REVIEW_STOPPED)

ReviewState = Literal["reviewing", "waiting", "idle"]
"""A thread's reviews: one runs, some wait for the thread to be idle, or none is due."""


class Reviews:
    """The review runs of this process, by thread: waiting in order, one going at a time."""

    def __init__(self, run: RunReview, pin: PinReview, close: CloseReview) -> None:
        self._run = run
        self._pin = pin
        self._close = close
        self._queues: dict[str, list[ReviewRef]] = {}
        """Each thread's reviews not yet ended, oldest first; the first may be going."""
        self._drivers: dict[str, asyncio.Task[None]] = {}
        self._holds: dict[str, int] = {}
        self._settled: dict[str, asyncio.Event] = {}

    def submit(self, review: ReviewRef) -> None:
        """Queue `review` behind its turn; returns at once (the runner calls it)."""
        self._queues.setdefault(review.thread_id, []).append(review)
        self._settled.setdefault(review.thread_id, asyncio.Event()).clear()
        self._kick(review.thread_id)

    def state(self, thread_id: str) -> ReviewState:
        """What `thread_id`'s reviews are doing now."""
        if thread_id in self._drivers:
            return "reviewing"
        return "waiting" if self._queues.get(thread_id) else "idle"

    def pending(self, thread_id: str) -> bool:
        """Whether a review of `thread_id` is going on or waiting."""
        return self.state(thread_id) != "idle"

    async def wait(self, thread_id: str) -> None:
        """Return once `thread_id` has no review going on or waiting (at once when none).

        A review waits while something holds the thread, so this waits for that too.
        The waiter's own cancellation leaves the reviews as they are.
        """
        settled = self._settled.get(thread_id)
        if settled is not None:
            await settled.wait()

    @asynccontextmanager
    async def hold(self, thread_id: str, why: ReviewStop) -> AsyncIterator[None]:
        """Keep `thread_id`'s reviews from running while the block runs (a turn, a revert).

        The review going on is stopped and recorded as deferred (`why`); they all run
        once the last hold has ended.
        """
        self._holds[thread_id] = self._holds.get(thread_id, 0) + 1
        try:
            await self._stop(thread_id, why)
            yield
        finally:
            self._holds[thread_id] -= 1
            if not self._holds[thread_id]:
                del self._holds[thread_id]
                self._kick(thread_id)

    async def skip(self, thread_id: str) -> int:
        """Skip every review of `thread_id`, recorded as skipped by the person; how many."""
        return await self._stop(thread_id, ReviewStop(False, SKIPPED_BY_PERSON))

    async def cancel(self, thread_id: str) -> None:
        """Stop `thread_id`'s reviews (recorded as skipped), and wait for their end."""
        await self._stop(thread_id, STOPPED)

    async def aclose(self) -> None:
        """Stop every review (DuckLM is closing); each is recorded as skipped."""
        for thread_id in list(self._queues):
            await self._stop(thread_id, STOPPED)

    async def _stop(self, thread_id: str, why: ReviewStop) -> int:
        """Stop the review going on, then record each one not ended as `why` says; how many."""
        driver = self._drivers.pop(thread_id, None)
        if driver is not None:
            driver.cancel()  # the review writes what it has; `close` records the stop
            await asyncio.wait([driver])
        queue = self._queues.get(thread_id, [])
        stopped = 0
        # Each one's row says where it is (the flag `deferred` may be stale for the one
        # whose driver had started it again): `close` records only a change.
        for waiting in list(queue):
            review = await self._pinned(waiting)
            still_open = await self._close(review, why)
            stopped += still_open
            _replace(queue, review, dataclasses.replace(review, deferred=True))
            if not (why.deferred and still_open):
                _replace(queue, review, None)
        if not queue:
            self._forget(thread_id)
        return stopped

    async def _pinned(self, review: ReviewRef) -> ReviewRef:
        """`review` with the checkpoint of its answer, read now if not yet (and kept)."""
        if review.checkpoint_id is not None:
            return review
        pinned = dataclasses.replace(review, checkpoint_id=await self._pin(review.thread_id))
        _replace(self._queues.get(review.thread_id, []), review, pinned)
        return pinned

    def _kick(self, thread_id: str) -> None:
        if thread_id in self._holds or thread_id in self._drivers:
            return
        if not self._queues.get(thread_id):
            return
        driver = asyncio.create_task(self._drive(thread_id), name=f"ducklm-review-{thread_id}")
        self._drivers[thread_id] = driver
        driver.add_done_callback(lambda done: self._ended(thread_id, done))

    async def _drive(self, thread_id: str) -> None:
        queue = self._queues[thread_id]
        while queue:
            review = await self._pinned(queue[0])
            for later in queue[1:]:  # the earliest goes first: the others wait, deferred
                if not later.deferred:
                    parked = await self._pinned(later)
                    await self._close(parked, DEFERRED_FOR_EARLIER)
                    _replace(queue, parked, dataclasses.replace(parked, deferred=True))
            try:
                async for _ in self._run(review):
                    pass  # every event is audited by the run
            except ThreadRunning:  # another process runs the thread: try again when idle
                log.info("review %s of thread %s waits: the thread runs", review.run_id, thread_id)
                return
            # The runner records its failures; this is what escaped it.
            except Exception:
                log.exception("review %s of thread %s failed", review.run_id, thread_id)
            queue.pop(0)

    def _ended(self, thread_id: str, done: asyncio.Task[None]) -> None:
        if self._drivers.get(thread_id) is done:
            del self._drivers[thread_id]
        if not self._queues.get(thread_id):
            self._forget(thread_id)

    def _forget(self, thread_id: str) -> None:
        self._queues.pop(thread_id, None)
        settled = self._settled.pop(thread_id, None)
        if settled is not None:
            settled.set()


def _replace(queue: list[ReviewRef], review: ReviewRef, new: ReviewRef | None) -> None:
    """Put `new` in `review`'s place in `queue` (by run id), or take it out (`None`)."""
    for i, waiting in enumerate(queue):
        if waiting.run_id == review.run_id:
            if new is None:
                del queue[i]
            else:
                queue[i] = new
            return
