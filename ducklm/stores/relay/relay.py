"""A worker's relay: its publisher, its listener and its journal reader, opened with the server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection

from ducklm.stores.relay.journal import JournalReader
from ducklm.stores.relay.listener import Listener
from ducklm.stores.relay.payload import Notice
from ducklm.stores.relay.publisher import Publisher

CONNECT_TIMEOUT_S = 10


@dataclass
class Relay:
    """Live events to and from the other workers on the database."""

    publisher: Publisher
    listener: Listener
    journal: JournalReader
    """Reads journaled streams (`keep`) back: what a follower missed."""

    def send(self, task_id: str, key: str, item: dict[str, Any]) -> None:
        """Queue a live event of a task this worker runs (see `Publisher.send`)."""
        self.publisher.send(task_id, key, item)

    def keep(self, stream: str, key: int, item: dict[str, Any]) -> None:
        """Queue the `key`-th event of a journaled stream (see `Publisher.keep`)."""
        self.publisher.keep(stream, key, item)

    def subscribe(
        self, task_id: str
    ) -> contextlib.AbstractAsyncContextManager[asyncio.Queue[Notice | None]]:
        """Listen to a task another worker runs, or a journaled stream (`Listener.subscribe`)."""
        return self.listener.subscribe(task_id)


@contextlib.asynccontextmanager
async def relay_of(database_url: str | None) -> AsyncIterator[Relay | None]:
    """A relay on PostgreSQL's `database_url`; `None` without one (SQLite: one process)."""
    if database_url is None:
        yield None
        return
    async with open_relay(database_url) as relay:
        yield relay


@contextlib.asynccontextmanager
async def open_relay(url: str) -> AsyncIterator[Relay]:
    """A relay on the PostgreSQL database at `url`: two connections, opened when used."""

    async def connect() -> AsyncConnection[Any]:
        return await AsyncConnection.connect(
            url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
        )

    relay = Relay(Publisher(connect), Listener(connect), JournalReader(connect))
    try:
        yield relay
    finally:
        await relay.publisher.close()
        await relay.listener.close()
        await relay.journal.close()
