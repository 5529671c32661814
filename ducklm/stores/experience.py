"""Experience: what the critic concluded about each turn, kept to learn from."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from ducklm.stores.db import Database


@dataclass(frozen=True)
class ExperienceRecord:
    """One turn's reflection."""

    id: str
    thread_id: str
    run_id: str | None
    score: float
    summary: str
    what_worked: list[str] = field(default_factory=list)
    what_failed: list[str] = field(default_factory=list)
    lesson: str = ""
    confidence: float = 0.0
    proposal_id: str | None = None
    created_at: float = 0.0


_COLUMNS = (
    "id, thread_id, run_id, score, summary, what_worked, what_failed, lesson, confidence, "
    "proposal_id, created_at"
)


class ExperienceLog:
    """The `experience` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, record: ExperienceRecord) -> ExperienceRecord:
        """Store `record` (a fresh id and time are given when empty)."""
        stored = ExperienceRecord(
            **{
                **record.__dict__,
                "id": record.id or str(uuid.uuid4()),
                "created_at": record.created_at or time.time(),
            }
        )
        row = _row(stored)
        await self._db.execute(
            f"INSERT INTO experience ({_COLUMNS}) VALUES ({', '.join('?' * len(row))})", row
        )
        return stored

    async def list(
        self, *, thread_id: str | None = None, limit: int = 50
    ) -> list[ExperienceRecord]:
        """The newest records first, optionally of one thread."""
        query = f"SELECT {_COLUMNS} FROM experience"
        params: list[Any] = []
        if thread_id is not None:
            query += " WHERE thread_id = ?"
            params.append(thread_id)
        query += " ORDER BY created_at DESC LIMIT ?"
        params.append(limit)
        rows = await self._db.fetchall(query, params)
        return [_record(row) for row in rows]


def _row(r: ExperienceRecord) -> tuple[Any, ...]:
    return (
        r.id, r.thread_id, r.run_id, r.score, r.summary, json.dumps(r.what_worked),
        json.dumps(r.what_failed), r.lesson, r.confidence, r.proposal_id, r.created_at,
    )  # fmt: skip


def _record(row: Any) -> ExperienceRecord:
    values = list(row)
    values[5], values[6] = json.loads(values[5]), json.loads(values[6])
    return ExperienceRecord(*values)
