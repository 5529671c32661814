"""The Agent Protocol's runs: what LangGraph clients keep on a run that DuckLM has no column for.

A LangGraph run is one DuckLM run (`ducklm.stores.runs`): one invocation of the graph,
ended by its answer, a question, a failure or a cancel. Its status, times and audit are
DuckLM's. This table, `ap_runs`, keeps the rest of the LangGraph `Run`: the assistant,
the client's metadata, the request (`kwargs`) and the multitask strategy, and the one
mapping of ids: `run_id` is the id the client sees (minted by the door before the run
starts, and in its checkpoints' metadata, as on the LangGraph server), `duck_run_id` the
DuckLM run's (its events and audit carry that one), set when it starts. A run another
door started has no row: its LangGraph id is its DuckLM id.

`state` says what DuckLM's records cannot: `pending` (enqueued, not started), `started`,
`refused` (an enqueued run that could not start), `cancelled` (cancelled while pending)
and `deleted` (deleted by the client, or rolled back: gone from the door, while DuckLM's
audit keeps what it did).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Literal

from ducklm.stores import Database

RunState = Literal["pending", "started", "refused", "cancelled", "deleted"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS ap_runs (
    run_id             TEXT PRIMARY KEY,
    thread_id          TEXT NOT NULL,
    duck_run_id        TEXT,
    assistant_id       TEXT NOT NULL,
    created_at         REAL NOT NULL,
    updated_at         REAL NOT NULL,
    state              TEXT NOT NULL,
    metadata           TEXT NOT NULL DEFAULT '{}',
    kwargs             TEXT NOT NULL DEFAULT '{}',
    multitask_strategy TEXT NOT NULL DEFAULT 'reject',
    error              TEXT
);
CREATE INDEX IF NOT EXISTS ap_runs_thread ON ap_runs (thread_id, created_at);
CREATE INDEX IF NOT EXISTS ap_runs_duck ON ap_runs (duck_run_id);
"""
_COLUMNS = (
    "run_id, thread_id, duck_run_id, assistant_id, created_at, updated_at, state, "
    "metadata, kwargs, multitask_strategy, error"
)


@dataclass(frozen=True)
class RunRow:
    """A run as the door stored it."""

    run_id: str
    thread_id: str
    duck_run_id: str | None
    assistant_id: str
    created_at: float
    updated_at: float
    state: RunState
    metadata: dict[str, Any]
    kwargs: dict[str, Any]
    multitask_strategy: str
    error: str | None = None
    """Why an enqueued run could not start (`refused`)."""


class RunStore:
    """The `ap_runs` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @classmethod
    async def open(cls, db: Database) -> RunStore:
        """The store on `db`, its table created if missing."""
        await db.create_tables(SCHEMA)
        return cls(db)

    async def add(self, row: RunRow) -> None:
        """Record a new run."""
        await self._db.execute(
            f"INSERT INTO ap_runs ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.run_id,
                row.thread_id,
                row.duck_run_id,
                row.assistant_id,
                row.created_at,
                row.updated_at,
                row.state,
                json.dumps(row.metadata, default=str),
                json.dumps(row.kwargs, default=str),
                row.multitask_strategy,
                row.error,
            ),
        )

    async def started(self, run_id: str, duck_run_id: str) -> None:
        """Record that `run_id` started as DuckLM's run `duck_run_id`."""
        await self._db.execute(
            "UPDATE ap_runs SET state = 'started', duck_run_id = ?, updated_at = ? "
            "WHERE run_id = ?",
            (duck_run_id, time.time(), run_id),
        )

    async def set_state(self, run_id: str, state: RunState, error: str | None = None) -> None:
        """Move `run_id` to `state` (`error`: why, for `refused`)."""
        await self._db.execute(
            "UPDATE ap_runs SET state = ?, error = ?, updated_at = ? WHERE run_id = ?",
            (state, error, time.time(), run_id),
        )

    async def get(self, run_id: str) -> RunRow | None:
        """The run `run_id`, or `None`."""
        rows = await self._select("WHERE run_id = ?", (run_id,))
        return rows[0] if rows else None

    async def by_duck_run(self, duck_run_id: str) -> RunRow | None:
        """The door's run that started as DuckLM's run `duck_run_id`, or `None`."""
        rows = await self._select("WHERE duck_run_id = ?", (duck_run_id,))
        return rows[0] if rows else None

    async def delete(self, run_id: str) -> None:
        """Forget `run_id` (a run that was refused before it started)."""
        await self._db.execute("DELETE FROM ap_runs WHERE run_id = ?", (run_id,))

    async def forget_thread(self, thread_id: str) -> None:
        """Forget the runs of a deleted thread."""
        await self._db.execute("DELETE FROM ap_runs WHERE thread_id = ?", (thread_id,))

    async def active_threads(self) -> list[str]:
        """The threads with a run enqueued here, or a turn running (any door, any process).

        A turn's run is DuckLM's (`ducklm.stores.runs`), in the same database: a review
        is not a turn, and a deferred one does not hold its thread.
        """
        rows = await self._db.fetchall(
            "SELECT thread_id FROM ap_runs WHERE state = 'pending' UNION "
            "SELECT thread_id FROM runs WHERE status = 'running' "
            "AND COALESCE(kind, 'turn') = 'turn'"
        )
        return [row[0] for row in rows]

    async def for_thread(self, thread_id: str) -> list[RunRow]:
        """The runs of `thread_id`, oldest first."""
        return await self._select("WHERE thread_id = ? ORDER BY created_at", (thread_id,))

    async def _select(self, where: str, params: tuple[object, ...]) -> list[RunRow]:
        rows = await self._db.fetchall(f"SELECT {_COLUMNS} FROM ap_runs {where}", params)
        return [
            RunRow(
                run_id=row[0],
                thread_id=row[1],
                duck_run_id=row[2],
                assistant_id=row[3],
                created_at=row[4],
                updated_at=row[5],
                state=row[6],
                metadata=json.loads(row[7]),
                kwargs=json.loads(row[8]),
                multitask_strategy=row[9],
                error=row[10],
            )
            for row in rows
        ]
