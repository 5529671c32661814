"""The Store API's index: which memory holds each item put through it, by namespace.

The items themselves are DuckLM's memories (`server/agent_protocol/store/mapping.py`).
This table, `ap_store_items`, lets a namespace prefix be found in SQL:
`(namespace, key) -> memory_id`, the namespace's labels joined by `.` (labels hold no
period). A memory DuckLM wrote has no row: it is found by its scope. A row whose memory
is gone (deleted by `/v1/memory`, or with its conversation) is skipped when read and
dropped at the next delete of its item.
"""

from __future__ import annotations

from dataclasses import dataclass

from ducklm.stores import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS ap_store_items (
    namespace TEXT NOT NULL,
    key       TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    PRIMARY KEY (namespace, key)
);
"""


@dataclass(frozen=True)
class IndexRow:
    """One item put through the Store API."""

    namespace: tuple[str, ...]
    key: str
    memory_id: str


class StoreIndex:
    """The `ap_store_items` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @classmethod
    async def open(cls, db: Database) -> StoreIndex:
        """The index on `db`, its table created if missing."""
        await db.create_tables(SCHEMA)
        return cls(db)

    async def put(self, namespace: tuple[str, ...], key: str, memory_id: str) -> None:
        """Note that item `key` of `namespace` is memory `memory_id`."""
        await self._db.execute(
            "INSERT INTO ap_store_items (namespace, key, memory_id) VALUES (?, ?, ?) "
            "ON CONFLICT (namespace, key) DO UPDATE SET memory_id = excluded.memory_id",
            (_joined(namespace), key, memory_id),
        )

    async def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Forget item `key` of `namespace`."""
        await self._db.execute(
            "DELETE FROM ap_store_items WHERE namespace = ? AND key = ?",
            (_joined(namespace), key),
        )

    async def under(self, prefix: tuple[str, ...]) -> list[IndexRow]:
        """Every row whose namespace is `prefix` or starts with it (all for `()`)."""
        if not prefix:
            rows = await self._db.fetchall("SELECT namespace, key, memory_id FROM ap_store_items")
        else:
            joined = _joined(prefix)
            # substr, not LIKE: labels may hold `%` and `_`; both SQLite and PostgreSQL have it.
            rows = await self._db.fetchall(
                "SELECT namespace, key, memory_id FROM ap_store_items "
                "WHERE namespace = ? OR substr(namespace, 1, ?) = ?",
                (joined, len(joined) + 1, joined + "."),
            )
        return [IndexRow(tuple(str(ns).split(".")), str(key), str(mid)) for ns, key, mid in rows]


def _joined(namespace: tuple[str, ...]) -> str:
    return ".".join(namespace)
