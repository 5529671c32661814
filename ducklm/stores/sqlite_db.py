"""DuckLM's tables in one SQLite file, through one `aiosqlite` connection."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from pathlib import Path

import aiosqlite

from ducklm.stores.db import Database, Params, Row
from ducklm.stores.private import create_private_file
from ducklm.stores.schema import ONE_RUNNING_RUN, SCHEMA

log = logging.getLogger(__name__)


class SqliteDatabase(Database):
    """One `aiosqlite` connection that every store of the process shares.

    Several tasks use the connection at once (the runner appends audit events while a node
    stores a rule), and a commit fails while another task's statement is still open, so
    each statement, or each `transaction()` as a whole, holds `lock` up to its commit.
    Across processes SQLite itself runs one write transaction at a time.
    """

    dialect = "sqlite"

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.lock = asyncio.Lock()
        self._in_transaction: ContextVar[bool] = ContextVar(f"sqlite-tx-{id(self)}", default=False)

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return how many rows it changed."""
        async with self._statement() as joined:
            async with self.conn.execute(sql, params) as cur:
                changed = cur.rowcount
            if not joined:
                await self.conn.commit()
        return changed

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement per row, in one transaction."""
        async with self._statement() as joined:
            await self.conn.executemany(sql, rows)
            if not joined:
                await self.conn.commit()

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """The first row, or `None` (an `INSERT ... RETURNING` commits here)."""
        async with self._statement() as joined:
            async with self.conn.execute(sql, params) as cur:
                row = await cur.fetchone()
            if not joined and self.conn.in_transaction:
                await self.conn.commit()
        return tuple(row) if row is not None else None

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Every row of a query."""
        async with self._statement(), self.conn.execute(sql, params) as cur:
            rows = await cur.fetchall()
        return [tuple(row) for row in rows]

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """Hold the lock for the whole block; commit at its end, roll back if it raises."""
        if self._in_transaction.get():
            yield
            return
        async with self.lock:
            token = self._in_transaction.set(True)
            try:
                yield
                await self.conn.commit()
            except BaseException:
                await self.conn.rollback()
                raise
            finally:
                self._in_transaction.reset(token)

    async def serialize(self, key: str) -> None:
        """Nothing to do: SQLite runs one write transaction at a time."""

    async def create_tables(self, ddl: str) -> None:
        """Run the DDL script as it is."""
        async with self._statement():
            await self.conn.executescript(ddl)
            await self.conn.commit()

    async def size(self) -> int:
        """Bytes of the file and its write-ahead log."""
        return await asyncio.to_thread(file_size, self.path)

    @asynccontextmanager
    async def _statement(self) -> AsyncIterator[bool]:
        # Inside a transaction its task already holds the lock: join it (yields True).
        if self._in_transaction.get():
            yield True
            return
        async with self.lock:
            yield False


def file_size(path: Path) -> int:
    """Bytes of an SQLite file and its write-ahead log. Blocking."""
    wal = path.with_name(path.name + "-wal")
    return sum(p.stat().st_size for p in (path, wal) if p.exists())


@asynccontextmanager
async def open_sqlite(path: Path) -> AsyncIterator[SqliteDatabase]:
    """Open (and create) DuckLM's SQLite file with WAL and a busy timeout.

    WAL lets a CLI read while a server writes; the busy timeout turns a brief lock into a
    short wait instead of a "database is locked" error.
    """
    await asyncio.to_thread(create_private_file, path)
    conn = await aiosqlite.connect(path)
    try:
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        await conn.execute("PRAGMA busy_timeout=5000")
        await _migrate(conn)
        await conn.executescript(SCHEMA)
        await _one_running_run(conn)
        await conn.commit()
        yield SqliteDatabase(conn, path)
    finally:
        await conn.close()


async def _migrate(conn: aiosqlite.Connection) -> None:
    """Bring a `runs` table created by an older DuckLM up to this schema."""
    async with conn.execute("PRAGMA table_info(runs)") as cur:
        columns = {row[1] for row in await cur.fetchall()}
    if not columns:  # a new file: the schema creates the table
        return
    if "task_id" not in columns:  # runs before tasks existed: each is its own task
        await conn.execute("ALTER TABLE runs ADD COLUMN task_id TEXT")
        await conn.execute("UPDATE runs SET task_id = run_id")
    if "owner" not in columns:  # runs before recovery existed: no owner process recorded
        await conn.execute("ALTER TABLE runs ADD COLUMN owner TEXT")
    if "cancel_requested" not in columns:  # runs before another process could cancel them
        await conn.execute("ALTER TABLE runs ADD COLUMN cancel_requested REAL")


async def _one_running_run(conn: aiosqlite.Connection) -> None:
    # An older file may hold two running runs of one thread (nothing forbade it); the
    # guard then waits until recovery or the runs' ends leave at most one.
    try:
        await conn.execute(ONE_RUNNING_RUN)
    except sqlite3.IntegrityError:
        log.warning("a thread has two running runs; one run per thread is not enforced yet")
