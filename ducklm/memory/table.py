"""The `memories` and `episodes` tables in DuckLM's database: the source of truth.

Both hold the same columns: an episode (a message as it was said) is a record with the
scope `workspace`, its conversation, its speaker in `memory_type` and its time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ducklm.memory.records import MemoryRecord, Scope
from ducklm.stores.db import Database

COLUMNS = (
    "id, text, scope, workspace, conversation_id, memory_type, importance, "
    "created_at, updated_at, superseded_by, metadata"
)


TABLES = frozenset({"memories", "episodes"})


class MemoryTable:
    """Reads and writes of one records table (`memories` or `episodes`)."""

    def __init__(self, db: Database, name: str = "memories") -> None:
        if name not in TABLES:  # the name goes into SQL text: only the known ones
            raise ValueError(f"unknown records table {name!r}")
        self._db = db
        self.name = name

    async def insert(self, records: Sequence[MemoryRecord]) -> None:
        """Store new records in one transaction."""
        await self._db.executemany(
            f"INSERT INTO {self.name} ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [_row(r) for r in records],
        )

    async def replace(self, record: MemoryRecord) -> None:
        """Write every field of an existing record."""
        await self._db.execute(
            f"UPDATE {self.name} SET text = ?, importance = ?, updated_at = ?, "
            "superseded_by = ?, metadata = ? WHERE id = ?",
            (
                record.text,
                record.importance,
                record.updated_at,
                record.superseded_by,
                json.dumps(record.metadata),
                record.id,
            ),
        )

    async def delete(self, memory_id: str) -> bool:
        """Delete one record; `False` when there was none."""
        return await self._db.execute(f"DELETE FROM {self.name} WHERE id = ?", (memory_id,)) > 0

    async def delete_conversation(self, conversation_id: str) -> list[str]:
        """Delete every record of one conversation; returns their ids."""
        async with self._db.transaction():
            rows = await self._db.fetchall(
                f"SELECT id FROM {self.name} WHERE conversation_id = ?", (conversation_id,)
            )
            await self._db.execute(
                f"DELETE FROM {self.name} WHERE conversation_id = ?", (conversation_id,)
            )
        return [str(row[0]) for row in rows]

    async def get_many(self, ids: Iterable[str]) -> dict[str, MemoryRecord]:
        """The records of `ids` that exist, by id."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))
        rows = await self._select(f"WHERE id IN ({marks})", wanted)
        return {r.id: r for r in rows}

    async def select(
        self,
        *,
        scope: Scope | None,
        workspace: str | None,
        conversation_id: str | None,
        include_superseded: bool,
        limit: int | None,
    ) -> list[MemoryRecord]:
        """Records matching every filter given, newest change first."""
        clauses: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("scope", scope),
            ("workspace", workspace),
            ("conversation_id", conversation_id),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if not include_superseded:
            clauses.append("superseded_by IS NULL")
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        tail = " LIMIT ?" if limit is not None else ""
        params += [limit] if limit is not None else []
        return await self._select(f"{where} ORDER BY updated_at DESC, id{tail}", params)

    async def next_said(self, record: MemoryRecord) -> MemoryRecord | None:
        """The record created next after `record` in its conversation, if any."""
        if record.conversation_id is None:
            return None
        rows = await self._select(
            "WHERE conversation_id = ? AND created_at > ? ORDER BY created_at, id LIMIT 1",
            (record.conversation_id, record.created_at),
        )
        return rows[0] if rows else None

    async def count(self) -> int:
        """How many records there are, superseded ones included."""
        row = await self._db.fetchone(f"SELECT COUNT(*) FROM {self.name}")
        return int(row[0]) if row else 0

    async def _select(self, tail: str, params: Sequence[Any]) -> list[MemoryRecord]:
        query = f"SELECT {COLUMNS} FROM {self.name} {tail}"
        rows = await self._db.fetchall(query, params)
        return [_record(row) for row in rows]


def _row(record: MemoryRecord) -> tuple[Any, ...]:
    return (
        record.id,
        record.text,
        record.scope,
        record.workspace,
        record.conversation_id,
        record.memory_type,
        record.importance,
        record.created_at,
        record.updated_at,
        record.superseded_by,
        json.dumps(record.metadata),
    )


def _record(row: Any) -> MemoryRecord:
    memory_id, text, scope, workspace, conversation_id, kind, importance, *rest = row
    created_at, updated_at, superseded_by, metadata = rest
    return MemoryRecord(
        id=memory_id,
        text=text,
        scope=scope,
        workspace=workspace,
        conversation_id=conversation_id,
        memory_type=kind,
        importance=importance,
        created_at=created_at,
        updated_at=updated_at,
        superseded_by=superseded_by,
        metadata=json.loads(metadata),
    )
