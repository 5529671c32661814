"""The run queue: the door's runs waiting to start, in a table every worker drains.

A row per run admitted but not started (its request is in `ap_runs`: `kwargs`, the
thread, `state = 'pending'`): the thread (a thread-less run's, minted at its request),
whether that thread is the run's own to delete at its end (`temporary`), when it was
enqueued (on the database's clock under PostgreSQL, so workers' clocks need not agree),
who took it (`taken_by`: a worker's id, `taken_at`), and whether its taker is starting it.

Taking is one conditional `UPDATE ... WHERE taken_by IS NULL OR <stale>`: on SQLite one
writer at a time, on PostgreSQL a second updater of the row waits for the first and
re-reads it, so two takers never both get a row. A taker keeps its rows fresh every
heartbeat (`renew`); a row whose taker stopped renewing (it died) for three heartbeats
is takeable again, like a run's lease (`ducklm/stores/leases.py`). Its taker marks it
`starting` (`claim`, conditional too) the instant before it starts the run and deletes
it once the run is recorded (`done`): a cancel deletes only a row not yet starting
(`remove`), so it is never followed by a start, and a starting row still holds its
thread's place, so the row behind it cannot start first.

Fair order: only the oldest row of a thread is a candidate, and only while the thread
has no running run (DuckLM's `runs`) and no run of a dead worker waiting for the
reaper's take-over; across threads, oldest first.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ducklm.stores import Database
from ducklm.stores.leases import LEASE_LOST, NOW

SCHEMA = """
CREATE TABLE IF NOT EXISTS ap_run_queue (
    run_id      TEXT PRIMARY KEY,
    thread_id   TEXT NOT NULL,
    temporary   INTEGER NOT NULL DEFAULT 0,
    enqueued_at REAL NOT NULL,
    taken_by    TEXT,
    taken_at    REAL,
    starting    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS ap_run_queue_thread ON ap_run_queue (thread_id, enqueued_at);
"""
_OLDEST_OF_THREAD = (
    "NOT EXISTS (SELECT 1 FROM ap_run_queue o WHERE o.thread_id = q.thread_id AND "
    "(o.enqueued_at < q.enqueued_at OR (o.enqueued_at = q.enqueued_at AND o.run_id < q.run_id)))"
)
_THREAD_FREE = (
    "NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = q.thread_id AND r.status = 'running' "
    "AND COALESCE(r.kind, 'turn') = 'turn') "
    # A dead worker's run being taken over (or left to be resumed): the rows behind it wait.
    "AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.thread_id = q.thread_id "
    "AND t.status = 'interrupted' AND t.error = ?)"
)


@dataclass(frozen=True)
class QueuedRun:
    """A row of the queue: a run waiting to start."""

    run_id: str
    thread_id: str
    temporary: bool
    """A thread-less run whose thread is deleted at its end (it is created by the run)."""
    taken_by: str | None = None
    enqueued_at: float | None = None
    """Its place in the line (`None`: now)."""
    starting: bool = False
    """Its taker was starting it (a candidate only once that taker went stale)."""


class RunQueue:
    """The `ap_run_queue` table."""

    def __init__(self, db: Database, stale_s: float) -> None:
        self._db = db
        self._stale_s = stale_s

    @classmethod
    async def open(cls, db: Database, stale_s: float) -> RunQueue:
        """The queue on `db`, its table created if missing.

        `stale_s`: how long a taken row stays its taker's without a renewal.
        """
        await db.create_tables(SCHEMA)
        return cls(db, stale_s)

    async def add(self, run: QueuedRun) -> None:
        """Enqueue `run` (already taken when `run.taken_by` is set)."""
        now, params = self._now()
        at, at_params = (now, params) if run.enqueued_at is None else ("?", (run.enqueued_at,))
        taken_at, taken_params = (now, params) if run.taken_by else ("NULL", ())
        await self._db.execute(
            "INSERT INTO ap_run_queue (run_id, thread_id, temporary, enqueued_at, taken_by, "
            f"taken_at) VALUES (?, ?, ?, {at}, ?, {taken_at})",
            (
                run.run_id,
                run.thread_id,
                int(run.temporary),
                *at_params,
                run.taken_by,
                *taken_params,
            ),
        )

    async def candidates(self, worker_id: str, limit: int) -> list[QueuedRun]:
        """Up to `limit` rows that may start now: each the oldest of a free thread.

        Untaken rows, rows `worker_id` holds, and rows whose taker went stale; oldest first.
        """
        now, params = self._now()
        rows = await self._db.fetchall(
            "SELECT q.run_id, q.thread_id, q.temporary, q.taken_by, q.enqueued_at, q.starting "
            "FROM ap_run_queue q "
            f"WHERE {_OLDEST_OF_THREAD} AND {_THREAD_FREE} AND (q.taken_by IS NULL "
            f"OR (q.taken_by = ? AND q.starting = 0) OR q.taken_at < {now} - ?) "
            "ORDER BY q.enqueued_at LIMIT ?",
            (LEASE_LOST, worker_id, *params, self._stale_s, limit),
        )
        return [QueuedRun(r[0], r[1], bool(r[2]), r[3], r[4], bool(r[5])) for r in rows]

    async def take(self, run_id: str, worker_id: str) -> bool:
        """Take `run_id` for `worker_id` if nobody holds it (or its taker went stale)."""
        now, params = self._now()
        changed = await self._db.execute(
            f"UPDATE ap_run_queue SET taken_by = ?, taken_at = {now}, starting = 0 "
            "WHERE run_id = ? AND (taken_by IS NULL OR (taken_by = ? AND starting = 0) "
            f"OR taken_at < {now} - ?)",
            (worker_id, *params, run_id, worker_id, *params, self._stale_s),
        )
        return changed == 1

    async def claim(self, run_id: str, worker_id: str) -> bool:
        """Mark `run_id` starting if `worker_id` still holds it: its run is this worker's."""
        changed = await self._db.execute(
            "UPDATE ap_run_queue SET starting = 1 WHERE run_id = ? AND taken_by = ? "
            "AND starting = 0",
            (run_id, worker_id),
        )
        return changed == 1

    async def unclaim(self, run_id: str, worker_id: str) -> None:
        """`run_id` could not start yet (another run got the thread first): it waits again."""
        await self._db.execute(
            "UPDATE ap_run_queue SET starting = 0 WHERE run_id = ? AND taken_by = ?",
            (run_id, worker_id),
        )

    async def done(self, run_id: str) -> None:
        """Delete `run_id`'s row: its run started, or was refused."""
        await self._db.execute("DELETE FROM ap_run_queue WHERE run_id = ?", (run_id,))

    async def renew(self, worker_id: str) -> None:
        """Keep the rows `worker_id` holds its own (every heartbeat while it holds some)."""
        now, params = self._now()
        await self._db.execute(
            f"UPDATE ap_run_queue SET taken_at = {now} WHERE taken_by = ?", (*params, worker_id)
        )

    async def release(self, worker_id: str) -> None:
        """Let other workers take the rows `worker_id` holds and is not starting (it stops)."""
        await self._db.execute(
            "UPDATE ap_run_queue SET taken_by = NULL, taken_at = NULL "
            "WHERE taken_by = ? AND starting = 0",
            (worker_id,),
        )

    async def remove(self, run_id: str) -> bool:
        """Delete `run_id`'s row unless it is starting; `False` if starting or gone."""
        changed = await self._db.execute(
            "DELETE FROM ap_run_queue WHERE run_id = ? AND starting = 0", (run_id,)
        )
        return changed == 1

    async def pending(self, thread_id: str) -> list[str]:
        """The run ids waiting on `thread_id`, oldest first."""
        rows = await self._db.fetchall(
            "SELECT run_id FROM ap_run_queue WHERE thread_id = ? ORDER BY enqueued_at, run_id",
            (thread_id,),
        )
        return [row[0] for row in rows]

    async def forget_thread(self, thread_id: str) -> None:
        """Drop the rows of a deleted thread."""
        await self._db.execute("DELETE FROM ap_run_queue WHERE thread_id = ?", (thread_id,))

    async def depth(self) -> int:
        """How many runs wait, on all threads and workers (`/metrics`)."""
        row = await self._db.fetchone("SELECT COUNT(*) FROM ap_run_queue")
        return int(row[0]) if row else 0

    def _now(self) -> tuple[str, tuple[object, ...]]:
        """The current time as SQL and its parameters: the database's clock on PostgreSQL."""
        if self._db.dialect == "postgres":
            return NOW, ()
        return "?", (time.time(),)
