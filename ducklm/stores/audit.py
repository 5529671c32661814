"""The audit log: every event of every run, with a monotonic sequence per thread."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ducklm.stores.db import Database

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AuditRecord:
    """One stored event."""

    thread_id: str
    seq: int
    run_id: str | None
    type: str
    ts: float
    data: dict[str, Any]


class AuditLog:
    """The `events` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def append(self, thread_id: str, run_id: str | None, event: dict[str, Any]) -> int:
        """Store `event` and return its sequence number within the thread.

        The next number is taken inside the INSERT itself, under the thread's lock
        (`Database.serialize`), so two writers (a CLI beside a server, or two servers on
        one PostgreSQL database) never take the same one.
        """
        async with self._db.transaction():
            await self._db.serialize(f"events:{thread_id}")
            row = await self._db.fetchone(
                "INSERT INTO events (thread_id, seq, run_id, type, ts, data) "
                "SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ? FROM events WHERE thread_id = ? "
                "RETURNING seq",
                (
                    thread_id,
                    run_id,
                    event["type"],
                    time.time(),
                    json.dumps(event, default=str),
                    thread_id,
                ),
            )
        assert row is not None  # INSERT ... RETURNING always yields the new row
        return int(row[0])

    async def append_numbered(
        self, thread_id: str, run_id: str, events: Sequence[tuple[int, float, dict[str, Any]]]
    ) -> None:
        """Store `(seq, ts, event)`s a run has numbered itself, in one transaction.

        (`ducklm.runtime.audit_buffer` numbers them: a thread's running run is its only writer.)

        Should a number be taken after all (a writer that did not respect the running
        run), the events are stored under the next free numbers instead, and said so.
        """
        if not events:
            return
        rows = [
            (thread_id, seq, run_id, event["type"], ts, json.dumps(event, default=str))
            for seq, ts, event in events
        ]
        try:
            async with self._db.transaction():
                await self._db.executemany(
                    "INSERT INTO events (thread_id, seq, run_id, type, ts, data) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    rows,
                )
        except Exception:
            log.warning("events of run %s renumbered: their numbers were taken", run_id)
            for _, _, event in events:
                await self.append(thread_id, run_id, event)

    async def list(
        self, thread_id: str, *, after: int = 0, run_id: str | None = None
    ) -> list[AuditRecord]:
        """Events of `thread_id` with `seq > after`, optionally of one run, in order."""
        query = "SELECT thread_id, seq, run_id, type, ts, data FROM events WHERE thread_id = ?"
        params: list[Any] = [thread_id]
        if run_id is not None:
            query += " AND run_id = ?"
            params.append(run_id)
        query += " AND seq > ? ORDER BY seq"
        params.append(after)
        rows = await self._db.fetchall(query, params)
        return [AuditRecord(r[0], r[1], r[2], r[3], r[4], json.loads(r[5])) for r in rows]
