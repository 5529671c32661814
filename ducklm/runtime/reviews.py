"""Review runs behind answered turns: the critic and memory policy after `done`.

A turn whose review runs behind it ends at its answer (`ducklm.runtime.runner`), and the
runner hands its recorded review run here. `Reviews` runs it as a background task, at
most one per thread: the next run on that thread waits for it (`wait`), so a review
never races the turn after it and reads the conversation as it was answered.

What stops a review is recorded, never lost: a review cancelled (DuckLM closing, its
conversation deleted) ends with `review_skipped`; one whose process died is recorded as
skipped by startup recovery (`ducklm.runtime.recovery`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

from ducklm.kit.events import Event
from ducklm.runtime.runner import ReviewRef

log = logging.getLogger(__name__)

RunReview = Callable[[ReviewRef], AsyncIterator[Event]]
"""Streams a review run's events (`stream_review` with the graph and stores bound)."""


class Reviews:
    """The review runs going on in this process, by thread."""

    def __init__(self, run: RunReview) -> None:
        self._run = run
        self._going: dict[str, asyncio.Task[None]] = {}

    def submit(self, review: ReviewRef) -> None:
        """Start `review` behind its turn; returns at once (the runner calls it)."""
        task = asyncio.create_task(self._drive(review), name=f"ducklm-review-{review.thread_id}")
        self._going[review.thread_id] = task
        task.add_done_callback(lambda done: self._forget(review.thread_id, done))

    def pending(self, thread_id: str) -> bool:
        """Whether a review of `thread_id` is going on."""
        return thread_id in self._going

    async def wait(self, thread_id: str) -> None:
        """Return once `thread_id` has no review going on (at once when it has none).

        The waiter's own cancellation leaves the review running.
        """
        task = self._going.get(thread_id)
        if task is not None:
            await asyncio.wait({task})

    async def cancel(self, thread_id: str) -> None:
        """Stop `thread_id`'s review, if any (recorded as skipped), and wait for its end."""
        task = self._going.get(thread_id)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def aclose(self) -> None:
        """Stop every review (DuckLM is closing); each is recorded as skipped."""
        tasks = list(self._going.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _drive(self, review: ReviewRef) -> None:
        try:
            async for _ in self._run(review):
                pass  # every event is audited by the run; nobody follows a review live
        # The runner records its failures (and a cancel, as skipped); this is what escaped it.
        except Exception:
            log.exception("review %s of thread %s failed", review.run_id, review.thread_id)

    def _forget(self, thread_id: str, done: asyncio.Task[None]) -> None:
        if self._going.get(thread_id) is done:
            del self._going[thread_id]
