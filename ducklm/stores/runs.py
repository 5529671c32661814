"""Runs: one row per task run on a thread, with its final status."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

import psycopg

from ducklm.stores.db import Database, ThreadRunning
from ducklm.stores.leases import RunLeases
from ducklm.stores.owner import ProcessOwner

_COLUMNS = (
    "run_id, thread_id, status, started_at, finished_at, answer, error, task_id, "
    # A row from before review runs existed has no kind: every such run was a turn.
    "COALESCE(kind, 'turn')"
)


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
    kind: str = "turn"
    """`turn`, or `review`: the critic and memory policy run behind a turn's answer."""


DEFERRED = "deferred"
"""A review run's status while it waits for its thread to be idle (`ducklm.runtime.reviews`)."""


class Runs:
    """The `runs` table.

    `owner` names this process (see `ducklm.runtime.recovery`); every run it starts records it,
    so a later process can tell a run whose process died from one still going. With
    `leases` (PostgreSQL) every run it starts is also leased to it (`ducklm.stores.leases`).
    """

    COLUMNS = _COLUMNS
    """The columns a `RunRecord` is read from, in its fields' order."""

    def __init__(
        self,
        db: Database,
        *,
        owner: ProcessOwner | None = None,
        leases: RunLeases | None = None,
    ) -> None:
        self._db = db
        self.owner = owner
        self.leases = leases

    async def start(self, run_id: str, thread_id: str, task_id: str, *, kind: str = "turn") -> None:
        """Record that `run_id` of `task_id` started on `thread_id`; `kind` as in `RunRecord`.

        Raises:
            ThreadRunning: Another run of the thread is recorded as running; a unique
                index says so, whichever process (or machine) started it.
        """
        columns, values, lease = self.leases.insert_columns() if self.leases else ("", "", ())
        owner = self.owner and self.owner.token()
        try:
            await self._db.execute(
                f"INSERT INTO runs (run_id, thread_id, status, started_at, task_id, owner, kind"
                f"{columns}) VALUES (?, ?, 'running', ?, ?, ?, ?{values})",
                (run_id, thread_id, time.time(), task_id, owner, kind, *lease),
            )
        except (sqlite3.IntegrityError, psycopg.errors.UniqueViolation):
            raise ThreadRunning(f"conversation {thread_id!r} is already running a task") from None

    async def finish(
        self, run_id: str, status: str, *, answer: str | None = None, error: str | None = None
    ) -> bool:
        """Record how `run_id` ended; `False` (nothing written) if it was no longer running.

        A run another process took over (its lease expired: `ducklm.runtime.reaper`) is
        that process's now: the stalled owner's end of it must not overwrite it.
        """
        changed = await self._db.execute(
            "UPDATE runs SET status = ?, finished_at = ?, answer = ?, error = ? "
            "WHERE run_id = ? AND status IN ('running', 'deferred')",
            (status, time.time(), answer, error, run_id),
        )
        return changed > 0

    async def defer(self, run_id: str) -> None:
        """Record that the review run `run_id` waits for its thread to be idle (`DEFERRED`).

        A deferred run does not hold its thread: the next turn may start.
        """
        await self._db.execute(
            "UPDATE runs SET status = 'deferred' WHERE run_id = ? AND status = 'running'",
            (run_id,),
        )

    async def undefer(self, run_id: str) -> bool:
        """Record that the deferred run `run_id` runs again; `False` if it was not deferred.

        Raises:
            ThreadRunning: Another run of its thread is running (the unique index).
        """
        try:
            changed = await self._db.execute(
                "UPDATE runs SET status = 'running' WHERE run_id = ? AND status = 'deferred'",
                (run_id,),
            )
        except (sqlite3.IntegrityError, psycopg.errors.UniqueViolation):
            raise ThreadRunning("the conversation is already running a task") from None
        if changed and self.leases is not None:
            await self.leases.hold(run_id)
        return changed > 0

    async def running(self) -> list[tuple[RunRecord, str | None]]:
        """Runs recorded as running (or deferred), each with the process that owns it.

        Oldest first. A deferred review run belongs to its process as a running one does.
        With leases, only runs without one: a leased run's owner is its lease, and an
        expired lease is the reaper's (`ducklm.runtime.reaper`), not a host's to judge.
        """
        unleased = " AND lease_owner IS NULL" if self.leases is not None else ""
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS}, owner FROM runs WHERE status IN ('running', 'deferred')"
            f"{unleased} ORDER BY started_at"
        )
        return [(RunRecord(*row[:-1]), row[-1]) for row in rows]

    async def mark_interrupted(self, run_id: str, reason: str) -> bool:
        """Record that `run_id` stopped because its process died; `False` if it had ended.

        Two processes starting at once may both find the run: only one of them marks it.
        """
        changed = await self._db.execute(
            "UPDATE runs SET status = 'interrupted', finished_at = ?, error = ? "
            "WHERE run_id = ? AND status IN ('running', 'deferred')",
            (time.time(), reason, run_id),
        )
        return changed > 0

    async def request_cancel(self, task_id: str) -> bool:
        """Ask the process running `task_id` to cancel it; `False` if no run of it runs.

        That process finds the request within `CANCEL_POLL_S` (`ducklm.server.tasks`).
        """
        changed = await self._db.execute(
            "UPDATE runs SET cancel_requested = ? WHERE task_id = ? AND status = 'running'",
            (time.time(), task_id),
        )
        return changed > 0

    async def to_stop(self, run_ids: list[str]) -> list[tuple[str, bool]]:
        """Which of `run_ids` (this process's) must stop, each with whether it was lost.

        A run must stop when a cancel was asked for it, or when it is lost.

        Lost: another process took the run over after this one failed to renew its lease
        for three heartbeats (its event loop stalled, or the database was out of reach).
        That process goes on with the task; this one must stop, not run it beside it.
        """
        if not run_ids:
            return []
        marks = ", ".join("?" * len(run_ids))
        params: list[object] = list(run_ids)
        lost = ""
        if self.leases is not None:
            lost = " OR (status = 'interrupted' AND lease_owner <> ?)"
            params.append(self.leases.worker_id)
        rows = await self._db.fetchall(
            f"SELECT run_id, status <> 'running' FROM runs WHERE run_id IN ({marks}) "
            f"AND ((status = 'running' AND cancel_requested IS NOT NULL){lost})",
            params,
        )
        return [(row[0], bool(row[1])) for row in rows]

    async def get(self, run_id: str) -> RunRecord | None:
        """The run `run_id`, or `None`."""
        row = await self._db.fetchone(f"SELECT {_COLUMNS} FROM runs WHERE run_id = ?", (run_id,))
        return RunRecord(*row) if row else None

    async def running_turns(self, thread_id: str) -> list[RunRecord]:
        """The turns of `thread_id` running now, in any process (a review is not a turn).

        One indexed read, not the thread's whole history: admission asks it before every
        Agent Protocol run.
        """
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM runs WHERE thread_id = ? AND status = 'running' "
            "AND COALESCE(kind, 'turn') = 'turn'",
            (thread_id,),
        )
        return [RunRecord(*row) for row in rows]

    async def for_thread(self, thread_id: str) -> list[RunRecord]:
        """Runs of `thread_id`, oldest first."""
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM runs WHERE thread_id = ? ORDER BY started_at", (thread_id,)
        )
        return [RunRecord(*row) for row in rows]
