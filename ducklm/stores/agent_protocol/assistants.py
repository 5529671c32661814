"""Assistants a client created: named DuckLM configurations, every version kept.

An assistant is a name, a description, metadata and a configuration (`config`, and
`context`, kept equal to `config.configurable` as the LangGraph server keeps them) for
the one graph, `ducklm`. What of the configuration a run honours is
`server/agent_protocol/assistants/config.py`'s. Two tables, on SQLite and PostgreSQL
alike: `ap_assistant_versions` holds each version as it was written (a `PATCH` writes a
new one); `ap_assistants` holds which version is the assistant's now
(`POST /assistants/{id}/latest` moves it) and its times. The graph's own assistant is not stored
(`server/agent_protocol/assistants/routes.py` serves it).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from typing import Any

from ducklm.stores import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS ap_assistants (
    assistant_id TEXT PRIMARY KEY,
    version      INTEGER NOT NULL,
    created_at   REAL NOT NULL,
    updated_at   REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS ap_assistant_versions (
    assistant_id TEXT NOT NULL,
    version      INTEGER NOT NULL,
    graph_id     TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT,
    config       TEXT NOT NULL DEFAULT '{}',
    context      TEXT NOT NULL DEFAULT '{}',
    metadata     TEXT NOT NULL DEFAULT '{}',
    created_at   REAL NOT NULL,
    PRIMARY KEY (assistant_id, version)
);
"""
_VERSION_COLUMNS = (
    "assistant_id, version, graph_id, name, description, config, context, metadata, created_at"
)
_CURRENT = (
    "SELECT v.assistant_id, v.version, v.graph_id, v.name, v.description, v.config, "
    "v.context, v.metadata, v.created_at, a.created_at, a.updated_at "
    "FROM ap_assistants a JOIN ap_assistant_versions v "
    "ON v.assistant_id = a.assistant_id AND v.version = a.version"
)


@dataclass(frozen=True)
class AssistantVersion:
    """One version of an assistant, as written."""

    assistant_id: str
    version: int
    graph_id: str
    name: str
    description: str | None
    config: dict[str, Any]
    context: dict[str, Any]
    metadata: dict[str, Any]
    created_at: float
    """When this version was written."""


@dataclass(frozen=True)
class AssistantRow:
    """An assistant now: its current version with the assistant's own times."""

    current: AssistantVersion
    created_at: float
    updated_at: float


class AssistantStore:
    """The `ap_assistants` and `ap_assistant_versions` tables."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @classmethod
    async def open(cls, db: Database) -> AssistantStore:
        """The store on `db`, its tables created if missing."""
        await db.create_tables(SCHEMA)
        return cls(db)

    async def create(self, first: AssistantVersion) -> bool:
        """Store a new assistant at version 1; `False` when its id is taken."""
        async with self._db.transaction():
            inserted = await self._db.execute(
                "INSERT INTO ap_assistants (assistant_id, version, created_at, updated_at) "
                "VALUES (?, 1, ?, ?) ON CONFLICT (assistant_id) DO NOTHING",
                (first.assistant_id, first.created_at, first.created_at),
            )
            if inserted:
                await self._write(replace(first, version=1))
        return inserted > 0

    async def get(self, assistant_id: str) -> AssistantRow | None:
        """The assistant, or `None`."""
        rows = await self._db.fetchall(f"{_CURRENT} WHERE a.assistant_id = ?", (assistant_id,))
        return _row(rows[0]) if rows else None

    async def all(self) -> list[AssistantRow]:
        """Every assistant."""
        return [_row(row) for row in await self._db.fetchall(_CURRENT)]

    async def add_version(self, assistant_id: str, change: dict[str, Any]) -> AssistantRow | None:
        """Write a new version: the current one with `change` (fields of `AssistantVersion`).

        It becomes the assistant's current version. `None` when there is no such assistant.
        """
        async with self._db.transaction():
            await self._db.serialize(f"ap_assistants:{assistant_id}")
            found = await self.get(assistant_id)
            if found is None:
                return None
            [(latest,)] = await self._db.fetchall(
                "SELECT MAX(version) FROM ap_assistant_versions WHERE assistant_id = ?",
                (assistant_id,),
            )
            now = time.time()
            await self._write(replace(found.current, **change, version=latest + 1, created_at=now))
            await self._point(assistant_id, latest + 1, now)
        return await self.get(assistant_id)

    async def set_latest(self, assistant_id: str, version: int) -> bool:
        """Make `version` the assistant's current one; `False` when it has no such version."""
        exists = await self._db.fetchone(
            "SELECT 1 FROM ap_assistant_versions WHERE assistant_id = ? AND version = ?",
            (assistant_id, version),
        )
        return exists is not None and await self._point(assistant_id, version, time.time())

    async def versions(self, assistant_id: str) -> list[AssistantVersion]:
        """Every version of the assistant, newest first."""
        rows = await self._db.fetchall(
            f"SELECT {_VERSION_COLUMNS} FROM ap_assistant_versions "
            "WHERE assistant_id = ? ORDER BY version DESC",
            (assistant_id,),
        )
        return [_version(row) for row in rows]

    async def delete(self, assistant_id: str) -> bool:
        """Forget the assistant and its versions; `False` when there was none."""
        async with self._db.transaction():
            deleted = await self._db.execute(
                "DELETE FROM ap_assistants WHERE assistant_id = ?", (assistant_id,)
            )
            await self._db.execute(
                "DELETE FROM ap_assistant_versions WHERE assistant_id = ?", (assistant_id,)
            )
        return deleted > 0

    async def _point(self, assistant_id: str, version: int, now: float) -> bool:
        changed = await self._db.execute(
            "UPDATE ap_assistants SET version = ?, updated_at = ? WHERE assistant_id = ?",
            (version, now, assistant_id),
        )
        return changed > 0

    async def _write(self, version: AssistantVersion) -> None:
        await self._db.execute(
            f"INSERT INTO ap_assistant_versions ({_VERSION_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                version.assistant_id,
                version.version,
                version.graph_id,
                version.name,
                version.description,
                json.dumps(version.config),
                json.dumps(version.context),
                json.dumps(version.metadata),
                version.created_at,
            ),
        )


def _version(row: tuple[Any, ...]) -> AssistantVersion:
    return AssistantVersion(
        assistant_id=row[0],
        version=int(row[1]),
        graph_id=row[2],
        name=row[3],
        description=row[4],
        config=json.loads(row[5]),
        context=json.loads(row[6]),
        metadata=json.loads(row[7]),
        created_at=row[8],
    )


def _row(row: tuple[Any, ...]) -> AssistantRow:
    return AssistantRow(_version(row[:9]), created_at=row[9], updated_at=row[10])
