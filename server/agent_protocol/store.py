"""The Agent Protocol's threads: which exist, when, their metadata, their last failure.

Values and interrupts are not copied here: they are read from the checkpointer, which
stays the one source of a thread's state. The table lives in DuckLM's own database
(SQLite or PostgreSQL, `ducklm.stores.db`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from ducklm.stores import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS ap_threads (
    thread_id  TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    metadata   TEXT NOT NULL DEFAULT '{}',
    error      TEXT
);
"""
_COLUMNS = "thread_id, created_at, updated_at, metadata, error"


@dataclass(frozen=True)
class ThreadRecord:
    """A thread as stored."""

    thread_id: str
    created_at: float
    updated_at: float
    metadata: dict[str, Any]
    """The client's metadata, plus `graph_id` and `assistant_id` once a run used it."""
    error: dict[str, Any] | None
    """How the last run failed (`{"error", "message"}`), or `None`."""

    @classmethod
    def from_row(cls, row: Any) -> ThreadRecord:
        """Build from a `SELECT` of `_COLUMNS`."""
        thread_id, created_at, updated_at, metadata, error = row
        failure = None if error is None else json.loads(error)
        return cls(thread_id, created_at, updated_at, json.loads(metadata), failure)


class ThreadStore:
    """The `ap_threads` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @classmethod
    async def open(cls, db: Database) -> ThreadStore:
        """The store on `db`, its table created if missing."""
        await db.create_tables(SCHEMA)
        return cls(db)

    async def create(self, thread_id: str, metadata: dict[str, Any]) -> ThreadRecord | None:
        """Add a thread; `None` when `thread_id` already exists."""
        now = time.time()
        inserted = await self._db.execute(
            "INSERT INTO ap_threads (thread_id, created_at, updated_at, metadata) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (thread_id) DO NOTHING",
            (thread_id, now, now, json.dumps(metadata)),
        )
        if inserted == 0:
            return None
        return ThreadRecord(thread_id, now, now, metadata, None)

    async def get(self, thread_id: str) -> ThreadRecord | None:
        """The thread `thread_id`, or `None`."""
        row = await self._db.fetchone(
            f"SELECT {_COLUMNS} FROM ap_threads WHERE thread_id = ?", (thread_id,)
        )
        return ThreadRecord.from_row(row) if row else None

    async def list(self) -> list[ThreadRecord]:
        """Every thread, most recently updated first."""
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM ap_threads ORDER BY updated_at DESC"
        )
        return [ThreadRecord.from_row(row) for row in rows]

    async def update(
        self,
        thread_id: str,
        *,
        metadata: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        set_error: bool = False,
    ) -> ThreadRecord | None:
        """Merge `metadata` into the thread's, set `error` if `set_error`, touch `updated_at`.

        Returns:
            The thread as updated, or `None` when it does not exist.
        """
        async with self._db.transaction():
            # Read-merge-write: the thread's lock keeps another server's merge out between.
            await self._db.serialize(f"ap_threads:{thread_id}")
            row = await self._db.fetchone(
                f"SELECT {_COLUMNS} FROM ap_threads WHERE thread_id = ?", (thread_id,)
            )
            if row is None:
                return None
            record = ThreadRecord.from_row(row)
            merged = {**record.metadata, **(metadata or {})}
            kept_error = error if set_error else record.error
            now = time.time()
            await self._db.execute(
                "UPDATE ap_threads SET updated_at = ?, metadata = ?, error = ? WHERE thread_id = ?",
                (now, json.dumps(merged), _json_or_null(kept_error), thread_id),
            )
        return ThreadRecord(thread_id, record.created_at, now, merged, kept_error)

    async def delete(self, thread_id: str) -> bool:
        """Forget `thread_id`; `False` when it did not exist."""
        return (
            await self._db.execute("DELETE FROM ap_threads WHERE thread_id = ?", (thread_id,)) > 0
        )


def _json_or_null(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value)
