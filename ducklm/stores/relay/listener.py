"""Receives live events with `LISTEN`, on a connection of its own, for this worker's followers.

A channel is listened to while a follower subscribes to it. psycopg's `notifies()` holds
the connection while it waits, so a `LISTEN` stops the reading task first (it waits at
an idle socket: nothing is half read) and starts it again after; notifications that come
in between are kept by psycopg and read first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from psycopg import AsyncConnection, sql

from ducklm.stores.relay.connect import Connect
from ducklm.stores.relay.payload import Notice, channel_of, decode

log = logging.getLogger(__name__)


class Listener:
    """One connection's `LISTEN`s, shared by the worker's followers."""

    def __init__(self, connect: Connect) -> None:
        self._connect = connect
        self._conn: AsyncConnection[Any] | None = None
        self._inboxes: dict[str, set[asyncio.Queue[Notice | None]]] = {}
        self._lock = asyncio.Lock()
        self._reading: asyncio.Task[None] | None = None

    @contextlib.asynccontextmanager
    async def subscribe(self, task_id: str) -> AsyncIterator[asyncio.Queue[Notice | None]]:
        """A queue of the task's notices, listened to when this returns.

        `None` in the queue: the connection broke; the follower reads the table instead.
        """
        channel = channel_of(task_id)
        inbox: asyncio.Queue[Notice | None] = asyncio.Queue()
        async with self._lock:
            inboxes = self._inboxes.setdefault(channel, set())
            if not inboxes:
                await self._command(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
            inboxes.add(inbox)
        try:
            yield inbox
        finally:
            async with self._lock:
                inboxes.discard(inbox)
                if not inboxes and self._inboxes.get(channel) is inboxes:
                    del self._inboxes[channel]
                    with contextlib.suppress(Exception):  # a broken connection listens to none
                        await self._command(sql.SQL("UNLISTEN {}").format(sql.Identifier(channel)))

    async def close(self) -> None:
        """Stop reading and close the connection."""
        await self._stop_reading()
        if self._conn is not None:
            await self._conn.close()

    async def _command(self, statement: sql.Composed) -> None:
        await self._stop_reading()
        try:
            if self._conn is None or self._conn.closed:  # broken: its LISTENs went with it
                self._conn = await self._connect()
                for channel in self._inboxes:
                    await self._conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
            await self._conn.execute(statement)
        finally:
            self._reading = asyncio.create_task(self._read(), name="ducklm-live-listen")

    async def _stop_reading(self) -> None:
        if self._reading is not None:
            self._reading.cancel()
            await asyncio.gather(self._reading, return_exceptions=True)
            self._reading = None

    async def _read(self) -> None:
        if self._conn is None:
            return
        try:
            async for note in self._conn.notifies():
                inboxes = self._inboxes.get(note.channel, ())
                notices = decode(note.payload) if inboxes else []
                for inbox in inboxes:
                    for notice in notices:
                        inbox.put_nowait(notice)
        except asyncio.CancelledError:
            raise
        except Exception:  # followers fall back to the table; a new one reconnects nothing
            log.warning("the live-event connection broke", exc_info=True)
            for inboxes in self._inboxes.values():
                for inbox in inboxes:
                    inbox.put_nowait(None)
            await self._conn.close()
