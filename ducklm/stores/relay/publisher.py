"""Sends a worker's live events with `NOTIFY`, batched, on a connection of its own.

`send` never awaits (the run's driver must not be suspended between receiving an event
and passing it on): it queues the event, and one flushing task sends what is queued,
all channels in one round trip (`SELECT pg_notify(...), ...`). Events that come while a
round trip is out wait for the next, so at a token-streaming rate the batches grow and
the round trips do not. One connection sends in order, so PostgreSQL delivers in order.
A journaled event (`keep`) is also written to `relay_journal` in the same flush, before
the notices (`journal.py`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from psycopg import AsyncConnection

from ducklm.stores.relay.connect import Connect
from ducklm.stores.relay.journal import Row, create_table, write_rows
from ducklm.stores.relay.payload import batches, channel_of, dump, encode_one

log = logging.getLogger(__name__)


class Publisher:
    """Queues live events by task and sends them behind the run."""

    def __init__(self, connect: Connect) -> None:
        self._connect = connect
        self._conn: AsyncConnection[Any] | None = None
        self._queued: dict[str, list[str]] = {}
        self._rows: list[Row] = []
        self._journal_ready = False
        self._flushing: asyncio.Task[None] | None = None

    def send(self, task_id: str, key: str, item: dict[str, Any]) -> None:
        """Queue `item` (at `key` in its task) for the task's followers; never blocks."""
        text = encode_one(key, item)
        if text is None:
            return
        self._queued.setdefault(channel_of(task_id), []).append(text)
        self._start_flush()

    def keep(self, stream: str, key: int, item: dict[str, Any]) -> None:
        """Queue `item` (the `key`-th of `stream`) as a row of the journal and a notice.

        Never blocks. The row is written before the notice is sent.
        """
        dumped = dump(item)
        self._rows.append((stream, key, dumped))
        text = encode_one(str(key), item, dumped)
        if text is not None:
            self._queued.setdefault(channel_of(stream), []).append(text)
        self._start_flush()

    def _start_flush(self) -> None:
        if self._flushing is None:
            self._flushing = asyncio.create_task(self._flush(), name="ducklm-live-send")

    async def drain(self) -> None:
        """Wait until everything queued so far is sent (or given up)."""
        while (flushing := self._flushing) is not None:
            await asyncio.shield(flushing)

    async def close(self) -> None:
        """Send what is queued, then close the connection."""
        await self.drain()
        if self._conn is not None:
            await self._conn.close()

    async def _flush(self) -> None:
        try:
            while self._queued or self._rows:
                queued, self._queued = self._queued, {}
                rows, self._rows = self._rows, []
                await self._notify(queued, rows)
        finally:
            self._flushing = None

    async def _notify(self, queued: dict[str, list[str]], rows: list[Row]) -> None:
        pairs = [(ch, p) for ch, texts in queued.items() for p in batches(texts)]
        sql = "SELECT " + ", ".join(["pg_notify(%s, %s)"] * len(pairs))
        params = [value for pair in pairs for value in pair]
        for attempt in (1, 2):  # a broken connection is replaced once
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = await self._connect()
                    self._journal_ready = False
                if rows:
                    await self._write(self._conn, rows)
                    rows = []  # written: a retry sends only the notices
                if pairs:
                    await self._conn.execute(sql, params)
                return
            except Exception:
                broken, self._conn = self._conn, None
                if broken is not None:
                    await broken.close()
                if attempt == 2:  # followers fill audited gaps from the table
                    log.warning("live events not relayed", exc_info=True)

    async def _write(self, conn: AsyncConnection[Any], rows: list[Row]) -> None:
        if not self._journal_ready:
            await create_table(conn)
            self._journal_ready = True
        await write_rows(conn, rows)
