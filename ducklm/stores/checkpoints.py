"""LangGraph's checkpointer: SQLite in the data dir, or PostgreSQL for several servers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from ducklm.graph.state import CHECKPOINT_TYPES
from ducklm.stores.backend import is_postgres_url
from ducklm.stores.postgres_db import POOL_MAX, setup_lock
from ducklm.stores.private import create_private_file


def open_checkpointer(
    location: Path | str,
) -> AbstractAsyncContextManager[BaseCheckpointSaver[Any]]:
    """The checkpointer on an SQLite file (a path) or a PostgreSQL database (a URL)."""
    if is_postgres_url(location):
        return open_postgres_checkpointer(str(location))
    return open_sqlite_checkpointer(Path(location))


def checkpoint_serde() -> JsonPlusSerializer:
    """LangGraph's serializer, allowed to rebuild the state's own types and nothing else.

    By default it rebuilds any class a checkpoint names (with a warning that this will
    be blocked): whoever can write the database could make it construct anything. The
    allowlist is LangGraph's safe types plus `CHECKPOINT_TYPES`.
    """
    return JsonPlusSerializer(allowed_msgpack_modules=CHECKPOINT_TYPES)


@asynccontextmanager
async def open_sqlite_checkpointer(path: Path) -> AsyncIterator[AsyncSqliteSaver]:
    """An `AsyncSqliteSaver` on `path` in WAL mode with `synchronous=NORMAL`.

    The saver's own default is a full fsync on every commit, and a turn commits once per
    superstep. In WAL mode NORMAL stays consistent after an application crash; only a
    power loss can drop the last commits. The busy timeout lets a CLI and a server share
    the file without "database is locked".
    """
    await asyncio.to_thread(create_private_file, path)  # SQLite's -wal/-shm copy its mode
    async with aiosqlite.connect(path) as conn:
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        await conn.execute("PRAGMA busy_timeout=5000")
        saver = AsyncSqliteSaver(conn, serde=checkpoint_serde())
        await saver.setup()
        yield saver


@asynccontextmanager
async def open_postgres_checkpointer(url: str) -> AsyncIterator[AsyncPostgresSaver]:
    """An `AsyncPostgresSaver` on a pool, its tables created (`setup()`) when missing.

    The saver needs autocommit connections with dict rows and no prepared statements
    (its documented setup). Setup runs under DuckLM's schema lock so two servers starting
    at once do not both run its migrations.
    """
    async with AsyncConnectionPool[AsyncConnection[dict[str, Any]]](
        url,
        min_size=1,
        max_size=POOL_MAX,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        check=AsyncConnectionPool.check_connection,  # as DuckLM's pool: survives a restart
    ) as pool:
        saver = AsyncPostgresSaver(pool, serde=checkpoint_serde())
        async with setup_lock(pool):
            await saver.setup()
        yield saver
