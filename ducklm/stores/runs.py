"""Runs: one row per task run on a thread, with its final status."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ducklm.stores.db import Database


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
    """The `runs` table."""

    def __init__(self, db: Database) -> None:
        self._conn = db.conn
        self._lock = db.lock

    async def start(
        self, run_id: str, thread_id: str, task_id: str, *, commit: bool = True
    ) -> None:
        """Record that `run_id` of `task_id` started on `thread_id`.

        With `commit=False` the row is committed by the next write on this connection
        (the runner lets its first audit event carry it: one commit instead of two).
        """
        async with self._lock:
            await self._conn.execute(
                "INSERT INTO runs (run_id, thread_id, status, started_at, task_id) "
                "VALUES (?, ?, 'running', ?, ?)",
                (run_id, thread_id, time.time(), task_id),
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

    async def get(self, run_id: str) -> RunRecord | None:
        """The run `run_id`, or `None`."""
        async with self._lock:
            async with self._conn.execute(
                "SELECT run_id, thread_id, status, started_at, finished_at, answer, error, task_id "
                "FROM runs WHERE run_id = ?",
                (run_id,),
            ) as cur:
                row = await cur.fetchone()
            return RunRecord(*row) if row else None

    async def for_thread(self, thread_id: str) -> list[RunRecord]:
        """Runs of `thread_id`, oldest first."""
        async with self._lock:
            async with self._conn.execute(
                "SELECT run_id, thread_id, status, started_at, finished_at, answer, error, task_id "
                "FROM runs WHERE thread_id = ? ORDER BY started_at",
                (thread_id,),
            ) as cur:
                rows = await cur.fetchall()
            return [RunRecord(*row) for row in rows]
