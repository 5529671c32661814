"""The door's crons (`ap_crons`) and what each tick did (`ap_cron_ticks`), in DuckLM's database.

A cron keeps the run request it makes (`payload`, as `POST /runs` takes it) and when it
is next due (`next_run_date`, Unix seconds). A scheduler claims a due cron by moving
`next_run_date` on with a conditional update, so two servers on one PostgreSQL database
never fire one tick twice. Every tick is recorded: `started` (with its run), `skipped`
(its last run still runs, or its thread waits for the person) or `refused` (the run
could not be made), with how many ticks it stood for beyond itself (`missed`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from ducklm.stores import Database

TickOutcome = Literal["started", "skipped", "refused"]
SORTABLE = (
    "cron_id",
    "assistant_id",
    "thread_id",
    "next_run_date",
    "end_time",
    "created_at",
    "updated_at",
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS ap_crons (
    cron_id          TEXT PRIMARY KEY,
    assistant_id     TEXT NOT NULL,
    thread_id        TEXT,
    on_run_completed TEXT,
    end_time         REAL,
    schedule         TEXT NOT NULL,
    timezone         TEXT,
    created_at       REAL NOT NULL,
    updated_at       REAL NOT NULL,
    payload          TEXT NOT NULL DEFAULT '{}',
    metadata         TEXT NOT NULL DEFAULT '{}',
    enabled          INTEGER NOT NULL DEFAULT 1,
    next_run_date    REAL NOT NULL,
    last_run_id      TEXT
);
CREATE INDEX IF NOT EXISTS ap_crons_due ON ap_crons (enabled, next_run_date);
CREATE TABLE IF NOT EXISTS ap_cron_ticks (
    cron_id  TEXT NOT NULL,
    due_at   REAL NOT NULL,
    at       REAL NOT NULL,
    outcome  TEXT NOT NULL,
    run_id   TEXT,
    missed   INTEGER NOT NULL DEFAULT 0,
    note     TEXT
);
CREATE INDEX IF NOT EXISTS ap_cron_ticks_cron ON ap_cron_ticks (cron_id, at);
"""
_COLUMNS = (
    "cron_id, assistant_id, thread_id, on_run_completed, end_time, schedule, timezone, "
    "created_at, updated_at, payload, metadata, enabled, next_run_date, last_run_id"
)


@dataclass(frozen=True)
class CronRow:
    """A cron as stored."""

    cron_id: str
    assistant_id: str
    thread_id: str | None
    """`None`: each run gets a new thread (a thread-less cron)."""
    on_run_completed: str | None
    """A thread-less cron's threads after each run: `delete` or `keep`."""
    end_time: float | None
    schedule: str
    timezone: str | None
    created_at: float
    updated_at: float
    payload: dict[str, Any]
    """The run request each tick makes (a `RunCreate`'s fields)."""
    metadata: dict[str, Any]
    enabled: bool
    next_run_date: float
    last_run_id: str | None = None
    """The run its last tick started (no overlap: a tick waits for nothing, it skips)."""


@dataclass(frozen=True)
class TickRow:
    """What one tick of a cron did."""

    cron_id: str
    due_at: float
    at: float
    outcome: TickOutcome
    run_id: str | None
    missed: int
    note: str | None


class CronStore:
    """The `ap_crons` and `ap_cron_ticks` tables."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @classmethod
    async def open(cls, db: Database) -> CronStore:
        """The store on `db`, its tables created if missing."""
        await db.create_tables(SCHEMA)
        return cls(db)

    async def add(self, row: CronRow) -> None:
        """Record a new cron."""
        await self._db.execute(
            f"INSERT INTO ap_crons ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            _params(row),
        )

    async def replace(self, row: CronRow) -> None:
        """Write every field of an existing cron (an update)."""
        await self._db.execute(
            "UPDATE ap_crons SET on_run_completed = ?, end_time = ?, schedule = ?, "
            "timezone = ?, updated_at = ?, payload = ?, metadata = ?, enabled = ?, "
            "next_run_date = ? WHERE cron_id = ?",
            (
                row.on_run_completed,
                row.end_time,
                row.schedule,
                row.timezone,
                row.updated_at,
                json.dumps(row.payload, default=str),
                json.dumps(row.metadata, default=str),
                int(row.enabled),
                row.next_run_date,
                row.cron_id,
            ),
        )

    async def get(self, cron_id: str) -> CronRow | None:
        """The cron `cron_id`, or `None`."""
        rows = await self._select("WHERE cron_id = ?", (cron_id,))
        return rows[0] if rows else None

    async def delete(self, cron_id: str) -> bool:
        """Delete a cron (its ticks stay on record); `False` if there was none."""
        return await self._db.execute("DELETE FROM ap_crons WHERE cron_id = ?", (cron_id,)) > 0

    async def forget_thread(self, thread_id: str) -> None:
        """Delete the crons of a deleted thread."""
        await self._db.execute("DELETE FROM ap_crons WHERE thread_id = ?", (thread_id,))

    async def matching(
        self, *, assistant_id: str | None, thread_id: str | None, enabled: bool | None
    ) -> list[CronRow]:
        """The crons with these fields (`None`: any), oldest first."""
        where: list[str] = []
        params: list[object] = []
        for column, value in (("assistant_id", assistant_id), ("thread_id", thread_id)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if enabled is not None:
            where.append("enabled = ?")
            params.append(int(enabled))
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        return await self._select(f"{clause} ORDER BY created_at", tuple(params))

    async def due(self, now: float) -> list[CronRow]:
        """The enabled crons due at `now` (and not past their end), soonest first."""
        rows = await self._select(
            "WHERE enabled = 1 AND next_run_date <= ? AND (end_time IS NULL OR end_time >= ?) "
            "ORDER BY next_run_date",
            (now, now),
        )
        return rows

    async def soonest(self, now: float) -> float | None:
        """When the next enabled cron that has not ended is due, or `None`."""
        row = await self._db.fetchone(
            "SELECT MIN(next_run_date) FROM ap_crons WHERE enabled = 1 AND "
            "(end_time IS NULL OR (end_time >= next_run_date AND end_time >= ?))",
            (now,),
        )
        return float(row[0]) if row and row[0] is not None else None

    async def claim(self, row: CronRow, next_run_date: float) -> bool:
        """Move a due cron on to `next_run_date`; `False` if another scheduler did first."""
        changed = await self._db.execute(
            "UPDATE ap_crons SET next_run_date = ? WHERE cron_id = ? AND next_run_date = ?",
            (next_run_date, row.cron_id, row.next_run_date),
        )
        return changed > 0

    async def ran(self, cron_id: str, run_id: str) -> None:
        """Record the run a cron's tick started."""
        await self._db.execute(
            "UPDATE ap_crons SET last_run_id = ? WHERE cron_id = ?", (run_id, cron_id)
        )

    async def record_tick(self, tick: TickRow) -> None:
        """Record what a tick did."""
        await self._db.execute(
            "INSERT INTO ap_cron_ticks (cron_id, due_at, at, outcome, run_id, missed, note) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (tick.cron_id, tick.due_at, tick.at, tick.outcome, tick.run_id, tick.missed, tick.note),
        )

    async def ticks(self, cron_id: str) -> list[TickRow]:
        """The ticks of `cron_id`, oldest first."""
        rows = await self._db.fetchall(
            "SELECT cron_id, due_at, at, outcome, run_id, missed, note FROM ap_cron_ticks "
            "WHERE cron_id = ? ORDER BY at",
            (cron_id,),
        )
        return [TickRow(*row) for row in rows]

    async def _select(self, where: str, params: tuple[object, ...]) -> list[CronRow]:
        rows = await self._db.fetchall(f"SELECT {_COLUMNS} FROM ap_crons {where}", params)
        return [_row(row) for row in rows]


def _params(row: CronRow) -> tuple[object, ...]:
    return (
        row.cron_id,
        row.assistant_id,
        row.thread_id,
        row.on_run_completed,
        row.end_time,
        row.schedule,
        row.timezone,
        row.created_at,
        row.updated_at,
        json.dumps(row.payload, default=str),
        json.dumps(row.metadata, default=str),
        int(row.enabled),
        row.next_run_date,
        row.last_run_id,
    )


def _row(row: tuple[Any, ...]) -> CronRow:
    return CronRow(
        cron_id=row[0],
        assistant_id=row[1],
        thread_id=row[2],
        on_run_completed=row[3],
        end_time=row[4],
        schedule=row[5],
        timezone=row[6],
        created_at=row[7],
        updated_at=row[8],
        payload=json.loads(row[9]),
        metadata=json.loads(row[10]),
        enabled=bool(row[11]),
        next_run_date=row[12],
        last_run_id=row[13],
    )
