"""The Agent Protocol's thread metadata: what LangGraph clients keep on a thread.

A thread is a DuckLM conversation (`ducklm.stores.conversations`): its existence, times
and title live there, its runs in DuckLM's tasks and runs, its state in the checkpointer.
This table keeps only the one thing LangGraph clients need that DuckLM has no column
for: the thread's metadata (`POST /threads {"metadata"}`, `PATCH`, and
`POST /threads/search {"metadata": ...}`, which agent-chat-ui lists its threads by).
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
    metadata   TEXT NOT NULL DEFAULT '{}'
);
"""


@dataclass(frozen=True)
class ThreadRecord:
    """A thread as the door shows it: the conversation's times with the client's metadata."""

    thread_id: str
    created_at: float
    updated_at: float
    metadata: dict[str, Any]
    """The client's metadata, plus `graph_id` and `assistant_id` once a run used it."""


class ThreadStore:
    """The `ap_threads` table: metadata by thread id."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @classmethod
    async def open(cls, db: Database) -> ThreadStore:
        """The store on `db`, its table created if missing."""
        await db.create_tables(SCHEMA)
        return cls(db)

    async def create(self, thread_id: str, metadata: dict[str, Any]) -> bool:
        """Give a new thread its metadata; `False` when it already has some."""
        now = time.time()
        inserted = await self._db.execute(
            "INSERT INTO ap_threads (thread_id, created_at, updated_at, metadata) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (thread_id) DO NOTHING",
            (thread_id, now, now, json.dumps(metadata)),
        )
        return inserted > 0

    async def get(self, thread_id: str) -> dict[str, Any] | None:
        """The metadata of `thread_id`, or `None` when it has none stored."""
        row = await self._db.fetchone(
            "SELECT metadata FROM ap_threads WHERE thread_id = ?", (thread_id,)
        )
        return dict(json.loads(row[0])) if row else None

    async def all(self) -> dict[str, dict[str, Any]]:
        """Every stored metadata, by thread id."""
        rows = await self._db.fetchall("SELECT thread_id, metadata FROM ap_threads")
        return {thread_id: json.loads(metadata) for thread_id, metadata in rows}

    async def merge(self, thread_id: str, metadata: dict[str, Any]) -> dict[str, Any]:
        """Merge `metadata` into the thread's (creating its row); returns the result."""
        async with self._db.transaction():
            # Read-merge-write: the thread's lock keeps another server's merge out between.
            await self._db.serialize(f"ap_threads:{thread_id}")
            merged = {**(await self.get(thread_id) or {}), **metadata}
            now = time.time()
            await self._db.execute(
                "INSERT INTO ap_threads (thread_id, created_at, updated_at, metadata) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (thread_id) DO UPDATE SET "
                "metadata = excluded.metadata, updated_at = excluded.updated_at",
                (thread_id, now, now, json.dumps(merged)),
            )
        return merged

    async def delete(self, thread_id: str) -> None:
        """Forget the metadata of `thread_id`."""
        await self._db.execute("DELETE FROM ap_threads WHERE thread_id = ?", (thread_id,))
