"""The in-process embedding model's one thread, which runs queries before background work.

Loading and every encode run on this one thread. torch keeps an OpenMP thread team per
calling thread; spread over several threads, the teams spin against each other, and on
two cores a query encodes 30% slower. One thread means one queue, though, and a turn's
query encode (recall, skill selection: on the way to the first token) would wait behind
whatever background encode came first (an episode write, an ingest, a reindex). So the
thread takes its work by priority: a query waits at most for the job already running,
and background callers keep their jobs small (`LocalEmbedder`).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import queue
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, TypeVar

T = TypeVar("T")


class Priority(IntEnum):
    """Which job the model thread runs first: the lowest value, then the oldest."""

    QUERY = 0
    BACKGROUND = 1


@dataclass(order=True)
class _Job:
    priority: Priority
    order: int
    work: Callable[[], Any] = field(compare=False)
    future: Future[Any] = field(compare=False)


class ModelThread:
    """One worker thread; `submit` never blocks, and the most urgent job runs next."""

    def __init__(self) -> None:
        # The executor's worker is the one thread (and interpreter exit joins it); each
        # job gets one turn of it, and a turn runs the most urgent job waiting then, not
        # necessarily the one it was submitted for: as many turns as jobs, so none is left.
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ducklm-embed")
        # The event loop puts jobs into a SimpleQueue (no lock, never blocks) and hands
        # the pool a turn, as `run_in_executor` did; the heap is touched on the model
        # thread alone, so it needs no lock.
        self._inbox: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._waiting: list[_Job] = []
        self._order = itertools.count()

    def submit(self, priority: Priority, work: Callable[[], T]) -> Future[T]:
        """Queue `work`; cancelling the returned future before it starts skips it.

        Raises:
            RuntimeError: The interpreter is shutting down.
        """
        future: Future[T] = Future()
        self._inbox.put(_Job(priority, next(self._order), work, future))
        try:
            self._pool.submit(self._run_next)
        except RuntimeError:
            future.cancel()  # it will never get a turn
            raise
        return future

    def _run_next(self) -> None:
        while True:
            try:
                heapq.heappush(self._waiting, self._inbox.get_nowait())
            except queue.Empty:
                break
        job = heapq.heappop(self._waiting)
        if not job.future.set_running_or_notify_cancel():
            return  # its caller stopped waiting before it started
        try:
            job.future.set_result(job.work())
        except BaseException as exc:  # handed to the caller, who decides
            job.future.set_exception(exc)


@functools.cache
def model_thread() -> ModelThread:
    """The process's model thread: every store and every event loop shares it."""
    return ModelThread()
