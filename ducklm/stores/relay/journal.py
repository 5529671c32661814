"""A stream's events kept in PostgreSQL beside their notices, for followers that come back.

`NOTIFY` reaches only who listens at that moment. A stream whose events are stored
nowhere else (the Agent Protocol door's graph chunks) is journaled: each event is also a
row of `relay_journal`, written by the publisher in the same flush as its notice, the
rows first, so a follower that gets a notice finds every row up to it, and a client that
reconnects to any worker after a gap reads what it missed. Rows are kept `KEEP_S`; the
worker whose stream ends purges older ones.

The table is created when first used (not at the worker's start: most never journal),
under an advisory lock of its own, so two workers cannot both create it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from psycopg import AsyncConnection

from ducklm.stores.relay.connect import Connect

log = logging.getLogger(__name__)

KEEP_S = 600
"""How long a stream's rows are kept after they were written."""
SCHEMA = (
    "SELECT pg_advisory_xact_lock(hashtext('ducklm_relay_journal'))",
    "CREATE TABLE IF NOT EXISTS relay_journal ("
    " stream TEXT NOT NULL, key BIGINT NOT NULL, item TEXT NOT NULL,"
    " at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (stream, key))",
    "CREATE INDEX IF NOT EXISTS relay_journal_at ON relay_journal (at)",
)
INSERT = "INSERT INTO relay_journal (stream, key, item) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING"
Row = tuple[str, int, str]
"""(stream, key, the event as JSON)."""


async def create_table(conn: AsyncConnection[Any]) -> None:
    """Create `relay_journal` if missing (`conn` is in autocommit mode)."""
    async with conn.transaction():
        for statement in SCHEMA:
            await conn.execute(statement)


async def write_rows(conn: AsyncConnection[Any], rows: list[Row]) -> None:
    """Insert `rows` (a row already there is kept: a resend after a broken connection)."""
    async with conn.cursor() as cursor:
        await cursor.executemany(INSERT, rows)


class JournalReader:
    """Reads journaled streams on a connection of its own, opened when first used."""

    def __init__(self, connect: Connect) -> None:
        self._connect = connect
        self._conn: AsyncConnection[Any] | None = None
        self._lock = asyncio.Lock()

    async def read(self, stream: str, after: int) -> list[tuple[int, dict[str, Any]]]:
        """The stream's events with `key > after`, in order."""
        rows = await self._fetch(
            "SELECT key, item FROM relay_journal WHERE stream = %s AND key > %s ORDER BY key",
            (stream, after),
        )
        return [(int(key), json.loads(item)) for key, item in rows]

    async def last(self, stream: str) -> int:
        """The stream's last key so far (0: none)."""
        rows = await self._fetch(
            "SELECT coalesce(max(key), 0) FROM relay_journal WHERE stream = %s", (stream,)
        )
        return int(rows[0][0])

    async def purge(self, keep_s: float = KEEP_S) -> None:
        """Delete every stream's rows older than `keep_s` seconds."""
        await self._fetch(
            "DELETE FROM relay_journal WHERE at < now() - make_interval(secs => %s)",
            (keep_s,),
        )

    async def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            await self._conn.close()

    async def _fetch(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        async with self._lock:  # one statement at a time on the one connection
            for attempt in (1, 2):  # a broken connection is replaced once
                try:
                    conn = await self._open()
                    cursor = await conn.execute(sql, params)
                    return list(await cursor.fetchall()) if cursor.description else []
                except Exception:
                    broken, self._conn = self._conn, None
                    if broken is not None:
                        await broken.close()
                    if attempt == 2:
                        raise
        raise AssertionError("unreachable")

    async def _open(self) -> AsyncConnection[Any]:
        if self._conn is None or self._conn.closed:
            conn = await self._connect()
            await create_table(conn)
            self._conn = conn
        return self._conn
