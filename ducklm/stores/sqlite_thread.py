"""The thread that owns DuckLM's SQLite connection: it runs what the event loop sends, in order.

sqlite3 blocks, so the connection lives on a thread of its own (as aiosqlite does). A job
is a plain function, so a statement, its rows and its commit make one trip to the thread
and back instead of one each. The hand-over is a `SimpleQueue` and a future settled with
`call_soon_threadsafe`, as in aiosqlite: `loop.run_in_executor` on a one-thread executor
took about 1.8x as long a trip here (47 vs 26 us, micro-benchmark on this machine).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any, TypeVar

T = TypeVar("T")

_Job = tuple[asyncio.Future[Any], Callable[[], Any]]


class ConnectionThread:
    """A daemon thread running jobs one at a time, in the order `run` sent them."""

    def __init__(self, name: str) -> None:
        self._jobs: SimpleQueue[_Job | None] = SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    async def run(self, work: Callable[[], T]) -> T:
        """Run `work` on the thread and return what it returns (or raise what it raises).

        A cancelled caller stops waiting; `work` still runs, so jobs keep their order.
        """
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._jobs.put((future, work))
        return await future

    def stop(self) -> None:
        """Let the thread end after the jobs sent so far."""
        self._jobs.put(None)

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, work = job
            try:
                result = work()
            except BaseException as exc:  # handed to the caller, whatever it is
                _reply(future, _fail, exc)
            else:
                _reply(future, _settle, result)


def _reply(future: asyncio.Future[Any], settle: Callable[..., None], value: Any) -> None:
    with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
        future.get_loop().call_soon_threadsafe(settle, future, value)


def _settle(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():  # the caller may have been cancelled meanwhile
        future.set_result(result)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)
