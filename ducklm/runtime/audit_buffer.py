"""A run's audit events, numbered at once and written a moment later, in batches.

A run is the only writer of its thread's events while it runs (the database allows one
running run per thread, across processes), so it can number them itself, from the
number its first event got. Other writers (giving up a waiting task, recovery) only
write when no run of the thread is running, and take the next number in the INSERT.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from ducklm.kit.events import Event
from ducklm.stores import AuditLog

log = logging.getLogger(__name__)

FLUSH_DELAY_S = 0.05
"""How long an event waits for others to share its write.

Long enough that no write lands between a request and its first token, short enough
that a reader of the audit table (`ducklm events --follow`, another server) lags by no
more than this.
"""


class AuditBuffer:
    """Numbers a run's events and writes them behind the run, in order."""

    def __init__(self, audit: AuditLog, thread_id: str, run_id: str) -> None:
        self._audit = audit
        self._thread_id = thread_id
        self._run_id = run_id
        self._last = 0
        self._waiting: list[tuple[int, float, dict[str, Any]]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._writing: asyncio.Task[None] | None = None

    def start_after(self, seq: int) -> None:
        """The run's first event was written as `seq`; the buffered ones follow it."""
        self._last = seq

    def add(self, item: Event) -> int:
        """Number `item` and queue it for writing; returns its number."""
        self._last += 1
        self._waiting.append((self._last, time.time(), dict(item)))
        if self._timer is None:
            self._arm()
        return self._last

    async def flush(self) -> None:
        """Write everything queued so far; returns when it has landed.

        Raises:
            Exception: The database's error, when the events cannot be written.
        """
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._writing is not None:
            await asyncio.shield(self._writing)
        if self._waiting:
            batch, self._waiting = self._waiting, []
            await self._audit.append_numbered(self._thread_id, self._run_id, batch)

    def _arm(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(FLUSH_DELAY_S, self._write_soon)

    def _write_soon(self) -> None:
        if self._writing is not None:  # one write at a time: try again a moment later
            self._arm()
            return
        self._timer = None
        self._writing = asyncio.create_task(self._write(), name=f"ducklm-audit-{self._run_id}")

    async def _write(self) -> None:
        batch, self._waiting = self._waiting, []
        try:
            await self._audit.append_numbered(self._thread_id, self._run_id, batch)
        except Exception:
            # Kept for the next write: the run's end writes what is left, or fails.
            log.warning("audit events of run %s not written yet", self._run_id, exc_info=True)
            self._waiting[:0] = batch
        finally:
            self._writing = None
