"""File-tool work on threads of its own, with a deadline.

A file tool's system call can block in the kernel past any bound: a hung network mount,
a disk that stops answering, a FIFO swapped in between a check and an open. Python cannot
stop a thread, so each call runs on a daemon thread of its own instead of the event
loop's default executor, and the caller stops waiting after `timeout_s`:

- the call ends as a `ToolError` the model reads, and the turn goes on; a cancelled turn
  ends at once too;
- the thread is left to finish by itself. It holds no worker of the shared executor
  (whose few workers, once all hung, stalled every later turn), and, being a daemon, it
  delays no exit: `asyncio.run`'s executor shutdown and `concurrent.futures`' exit hook
  join only executor threads. Its memory and file descriptors are freed when the call
  returns, or when the process ends;
- at most `MAX_THREADS` such threads run at once; past that a file tool refuses at once
  rather than pile up threads that may never end.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ducklm.config.settings import Settings
from ducklm.tools.errors import ToolError

T = TypeVar("T")

DEFAULT_TIMEOUT_S: float = Settings.model_fields["file_tool_timeout_s"].default
"""A file tool's deadline when the tool step passes none (`DUCK_FILE_TOOL_TIMEOUT_S`)."""
MAX_THREADS = 32

DID_NOT_FINISH = (
    "{tool} did not finish in {seconds:g} s: the file system did not answer (a hung or "
    "slow mount?). DuckLM stopped waiting; {then}"
)
THEN_READ = "try another path, or ask the user"
THEN_WRITE = "the write may still complete later: check the file before writing it again"
TOO_MANY = (
    "{tool} was not started: {count} earlier file tool calls have not finished (the file "
    "system does not answer); none start until they do, or DuckLM is restarted"
)
WRITING_TOOLS = frozenset(
    {"file_write", "generate_code", "fix_code", "refactor_code"}
    | {"file_delete", "file_move", "file_copy", "file_append"}
)
TIMED_TOOLS = WRITING_TOOLS | {"file_read", "list_dir", "search_files"}
"""The tools that take an injected `timeout_s` (the file tools and the coder tools)."""

_threads: set[threading.Thread] = set()
"""The threads started and not yet seen ended (touched only on event loops' threads)."""


async def run_file_work(tool: str, timeout_s: float | None, fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` on a daemon thread of its own: its result, or what it raised.

    `timeout_s`: how long to wait; `None` is `DEFAULT_TIMEOUT_S` (read at each call).

    Raises:
        ToolError: `fn`'s own, or: it did not finish within `timeout_s`, or too many
            earlier calls are still running.
    """
    running = _running()
    if running >= MAX_THREADS:
        raise ToolError(TOO_MANY.format(tool=tool, count=running))
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    future.set_running_or_notify_cancel()  # running: a cancel from the loop cannot undo it
    thread = threading.Thread(
        target=_work, args=(future, fn, args), name=f"ducklm-{tool}", daemon=True
    )
    _threads.add(thread)
    thread.start()
    seconds = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
    deadline = asyncio.timeout(seconds)
    try:
        async with deadline:
            return await asyncio.wrap_future(future)
    except TimeoutError:
        if not deadline.expired():  # fn's own TimeoutError (an OSError, ETIMEDOUT)
            raise
        then = THEN_WRITE if tool in WRITING_TOOLS else THEN_READ
        raise ToolError(DID_NOT_FINISH.format(tool=tool, seconds=seconds, then=then)) from None


def deadline_args(tool: str, settings: Settings) -> dict[str, float]:
    """What the tool step injects into a call of `tool` for its deadline (maybe nothing)."""
    return {"timeout_s": settings.file_tool_timeout_s} if tool in TIMED_TOOLS else {}


def _running() -> int:
    """How many file-tool threads are still running (forgetting the ended ones)."""
    _threads.difference_update([t for t in list(_threads) if not t.is_alive()])
    return len(_threads)


def _work(
    future: concurrent.futures.Future[T], fn: Callable[..., T], args: tuple[Any, ...]
) -> None:
    try:
        result = fn(*args)
    except BaseException as exc:  # handed to the caller, who may have stopped waiting
        future.set_exception(exc)
    else:
        future.set_result(result)
