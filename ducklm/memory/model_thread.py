"""The in-process embedding model's two threads: one for queries, one for background work.

A turn's query encode (recall, skill selection: on the way to the first token) must not
wait for background encodes (an episode write, an ingest, a reindex). With one model
thread taking jobs by priority, a query still waited for the job already running: a
64-text job takes 0.4 s on a quiet 2-core machine, and a search beside an ingest took
24x an idle one (`scripts/bench/memory_recall.py`, 2026-12-03). So queries have a thread
of their own and run beside a background job; `scripts/bench/query_beside_ingest.py`
measures a query there against an idle one.

Two threads mean two OpenMP teams of torch's on the same cores. Spinning, they starved
each other (a query 30% slower); with the threads asleep between regions
(`local_encoder._sleeping_openmp_threads`) a query beside a running 64-text job took
1.2x its idle time on the loaded machine, against 30x waiting behind the job on one
thread. Each lane is one thread, so queries run one at a time in the order given, and so
do background jobs. The model loads once, under a lock (`embeddings._encode`), and the
tokenizer, which is not safe to call from two threads at once, is called under another
(`LocalEncoder.encode`); the forward passes run side by side.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from enum import IntEnum
from typing import TypeVar

T = TypeVar("T")


class Priority(IntEnum):
    """Which lane a job runs on: queries never wait behind background work."""

    QUERY = 0
    BACKGROUND = 1


class ModelThread:
    """One worker thread per `Priority`; `submit` never blocks."""

    def __init__(self) -> None:
        # Each executor's worker is one thread, and interpreter exit joins it.
        self._lanes = {
            priority: ThreadPoolExecutor(
                max_workers=1, thread_name_prefix=f"ducklm-embed-{priority.name.lower()}"
            )
            for priority in Priority
        }

    def submit(self, priority: Priority, work: Callable[[], T]) -> Future[T]:
        """Queue `work` on its lane; cancelling the returned future before it starts skips it.

        Raises:
            RuntimeError: The interpreter is shutting down.
        """
        return self._lanes[priority].submit(work)


@functools.cache
def model_thread() -> ModelThread:
    """The process's model threads: every store and every event loop shares them."""
    return ModelThread()
