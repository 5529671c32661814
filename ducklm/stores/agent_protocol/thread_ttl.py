"""Threads' time to live: when a thread no one touches goes (`ttl` on create and update).

A TTL is counted from the thread's last activity: its conversation's last message, or the
TTL being set, whichever is later (a thread in use does not expire). The sweeper
(`server/agent_protocol/threads/retention.py`) deletes an expired thread whole, as
`DELETE /threads/{id}` does. The LangGraph server's other strategy, `keep_latest` (prune
old checkpoints, keep the thread), is refused with a `422`, as `langgraph dev` refuses
it; `ducklm prune` keeps the newest checkpoints of every thread instead. The table is its
own, so existing `ap_threads` tables need no migration.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from ducklm.stores import Database

TtlStrategy = Literal["delete", "keep_latest"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS ap_thread_ttl (
    thread_id TEXT PRIMARY KEY,
    strategy  TEXT NOT NULL,
    minutes   REAL NOT NULL,
    set_at    REAL NOT NULL
);
"""


@dataclass(frozen=True)
class ThreadTtl:
    """One thread's TTL."""

    strategy: TtlStrategy
    minutes: float
    set_at: float

    def expires_at(self, last_activity: float) -> float:
        """When the thread expires, given when it was last used."""
        return max(self.set_at, last_activity) + self.minutes * 60


class TtlStore:
    """The `ap_thread_ttl` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @classmethod
    async def open(cls, db: Database) -> TtlStore:
        """The store on `db`, its table created if missing."""
        await db.create_tables(SCHEMA)
        return cls(db)

    async def set(self, thread_id: str, strategy: TtlStrategy, minutes: float) -> None:
        """Give `thread_id` a TTL of `minutes`, counted from now (replacing any)."""
        await self._db.execute(
            "INSERT INTO ap_thread_ttl (thread_id, strategy, minutes, set_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (thread_id) DO UPDATE SET strategy = excluded.strategy, "
            "minutes = excluded.minutes, set_at = excluded.set_at",
            (thread_id, strategy, minutes, time.time()),
        )

    async def get(self, thread_id: str) -> ThreadTtl | None:
        """The TTL of `thread_id`, or `None`."""
        row = await self._db.fetchone(
            "SELECT strategy, minutes, set_at FROM ap_thread_ttl WHERE thread_id = ?",
            (thread_id,),
        )
        return ThreadTtl(row[0], row[1], row[2]) if row else None

    async def all(self) -> dict[str, ThreadTtl]:
        """Every TTL, by thread id."""
        rows = await self._db.fetchall(
            "SELECT thread_id, strategy, minutes, set_at FROM ap_thread_ttl"
        )
        return {row[0]: ThreadTtl(row[1], row[2], row[3]) for row in rows}

    async def delete(self, thread_id: str) -> None:
        """Forget the TTL of `thread_id`."""
        await self._db.execute("DELETE FROM ap_thread_ttl WHERE thread_id = ?", (thread_id,))
