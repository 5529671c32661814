"""Runs: one row per task run on a thread, with its final status."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ducklm.owner import ProcessOwner
from ducklm.stores.db import Database

_COLUMNS = "run_id, thread_id, status, started_at, finished_at, answer, error, task_id"


@dataclass(frozen=True)
class RunRecord:
    """A run as stored."""

    run_id: str
    thread_id: str
    status: str
    started_at: float
    finished_at: float | None
    answer: str | None
    error: str | None
    task_id: str | None


class Runs:
    """The `runs` table.

    `owner` names this process (see `ducklm.recovery`); every run it starts records it,
    so a later process can tell a run whose process died from one still going.
    """

    def __init__(self, db: Database, *, owner: ProcessOwner | None = None) -> None:
        self._conn = db.conn
        self._lock = db.lock
        self.owner = owner

    async def start(
        self, run_id: str, thread_id: str, task_id: str, *, commit: bool = True
    ) -> None:
        """Record that `run_id` of `task_id` started on `thread_id`.

        With `commit=False` the row is committed by the next write on this connection
        (the runner lets its first audit event carry it: one commit instead of two).
        """
        async with self._lock:
            await self._conn.execute(
                "INSERT INTO runs (run_id, thread_id, status, started_at, task_id, owner) "
                "VALUES (?, ?, 'running', ?, ?, ?)",
                (run_id, thread_id, time.time(), task_id, self.owner and self.owner.token()),
            )
            if commit:
                await self._conn.commit()

    async def finish(
        self,
        run_id: str,
        status: str,
        *,
        answer: str | None = None,
        error: str | None = None,
        commit: bool = True,
    ) -> None:
        """Record how `run_id` ended (`commit=False`: as in `start`)."""
        async with self._lock:
            await self._conn.execute(
                "UPDATE runs SET status = ?, finished_at = ?, answer = ?, error = ? "
                "WHERE run_id = ?",
                (status, time.time(), answer, error, run_id),
            )
            if commit:
                await self._conn.commit()

    async def running(self) -> list[tuple[RunRecord, str | None]]:
        """Runs recorded as running, each with the process that owns it, oldest first."""
        async with self._lock:
            async with self._conn.execute(
                f"SELECT {_COLUMNS}, owner FROM runs WHERE status = 'running' ORDER BY started_at"
            ) as cur:
                rows = await cur.fetchall()
            return [(RunRecord(*row[:-1]), row[-1]) for row in rows]

    async def mark_interrupted(self, run_id: str, reason: str, *, commit: bool = True) -> bool:
        """Record that `run_id` stopped because its process died; `False` if it was not running.

        Two processes starting at once may both find the run: only one of them marks it.
        `commit=False`: as in `start`.
        """
        async with self._lock:
            async with self._conn.execute(
                "UPDATE runs SET status = 'interrupted', finished_at = ?, error = ? "
                "WHERE run_id = ? AND status = 'running'",
                (time.time(), reason, run_id),
            ) as cur:
                marked = cur.rowcount > 0
            if commit or not marked:  # never leave a transaction open for nothing
                await self._conn.commit()
            return marked

    async def get(self, run_id: str) -> RunRecord | None:
        """The run `run_id`, or `None`."""
        async with self._lock:
            async with self._conn.execute(
                f"SELECT {_COLUMNS} FROM runs WHERE run_id = ?",
                (run_id,),
            ) as cur:
                row = await cur.fetchone()
            return RunRecord(*row) if row else None

    async def for_thread(self, thread_id: str) -> list[RunRecord]:
        """Runs of `thread_id`, oldest first."""
        async with self._lock:
            async with self._conn.execute(
                f"SELECT {_COLUMNS} FROM runs WHERE thread_id = ? ORDER BY started_at",
                (thread_id,),
            ) as cur:
                rows = await cur.fetchall()
            return [RunRecord(*row) for row in rows]
