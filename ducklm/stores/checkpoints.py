"""LangGraph's SQLite checkpointer, opened with the pragmas DuckLM needs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiosqlite
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver


@asynccontextmanager
async def open_checkpointer(path: Path) -> AsyncIterator[AsyncSqliteSaver]:
    """An `AsyncSqliteSaver` on `path` in WAL mode with `synchronous=NORMAL`.

    The saver's own default is a full fsync on every commit, and a turn commits once per
    superstep. In WAL mode NORMAL stays consistent after an application crash; only a
    power loss can drop the last commits. The busy timeout lets a CLI and a server share
    the file without "database is locked".
    """
    async with aiosqlite.connect(path) as conn:
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        await conn.execute("PRAGMA busy_timeout=5000")
        saver = AsyncSqliteSaver(conn)
        await saver.setup()
        yield saver
