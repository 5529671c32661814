"""DuckLM's tables in one SQLite file, on a connection that lives on one worker thread.

Every statement is one trip to that thread: the statement, its rows and, outside a
transaction, its commit run there together. aiosqlite (which the checkpointer uses) takes
a trip for each of those steps, and a trip is a thread wake-up on each side; a run's
bookkeeping took about 20 trips where it now takes 10 (docs/architecture.md, "DuckLM's
SQLite tables on a thread of their own").
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TypeVar

from ducklm.stores.db import Database, Params, Row
from ducklm.stores.private import create_private_file
from ducklm.stores.schema import ONE_RUNNING_RUN, SCHEMA
from ducklm.stores.sqlite_thread import ConnectionThread

log = logging.getLogger(__name__)

T = TypeVar("T")


class SqliteDatabase(Database):
    """One SQLite connection that every store of the process shares.

    The connection is made, used and closed on one thread (`ConnectionThread`, which
    runs statements in the order they were sent). Several tasks use it at once
    (the runner appends audit events while a node stores a rule), and a commit must not
    land inside another task's transaction, so each statement, or each `transaction()`
    as a whole, holds `lock`. Across processes SQLite itself runs one write transaction
    at a time.
    """

    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection, worker: ConnectionThread, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.lock = asyncio.Lock()
        self._worker = worker
        self._in_transaction: ContextVar[bool] = ContextVar(f"sqlite-tx-{id(self)}", default=False)

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return how many rows it changed."""

        def work() -> int:
            cur = self.conn.execute(sql, params)
            changed = cur.rowcount
            cur.close()
            return changed

        return await self._statement(work)

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement per row, in one transaction."""
        rows = list(rows)  # read on the loop: `rows` may be a generator over loop state
        await self._statement(lambda: self.conn.executemany(sql, rows).close())

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """The first row, or `None` (an `INSERT ... RETURNING` commits here)."""

        def work() -> Row | None:
            cur = self.conn.execute(sql, params)
            row = cur.fetchone()
            cur.close()
            return tuple(row) if row is not None else None

        return await self._statement(work)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Every row of a query."""

        def work() -> list[Row]:
            cur = self.conn.execute(sql, params)
            rows = cur.fetchall()
            cur.close()
            return [tuple(row) for row in rows]

        return await self._statement(work)

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
                await self._on_thread(self.conn.commit)
            except BaseException:
                await self._on_thread(self.conn.rollback)
                raise
            finally:
                self._in_transaction.reset(token)

    async def serialize(self, key: str) -> None:
        """Nothing to do: SQLite runs one write transaction at a time."""

    async def create_tables(self, ddl: str) -> None:
        """Run the DDL script as it is."""
        await self._statement(lambda: self.conn.executescript(ddl).close())

    async def size(self) -> int:
        """Bytes of the file and its write-ahead log."""
        return await asyncio.to_thread(file_size, self.path)

    async def _statement(self, work: Callable[[], T]) -> T:
        """`work` in one trip; on its own (outside a transaction) it commits there too."""
        if self._in_transaction.get():  # its task holds the lock; the block commits
            return await self._on_thread(work)
        async with self.lock:
            return await self._on_thread(lambda: _committed(self.conn, work))

    async def _on_thread(self, work: Callable[[], T]) -> T:
        return await self._worker.run(work)


def _committed(conn: sqlite3.Connection, work: Callable[[], T]) -> T:
    """Run `work` as a transaction of its own: commit it, or roll back what it began. Blocking."""
    try:
        result = work()
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise
    if conn.in_transaction:
        conn.commit()
    return result


def file_size(path: Path) -> int:
    """Bytes of an SQLite file and its write-ahead log. Blocking."""
    wal = path.with_name(path.name + "-wal")
    return sum(p.stat().st_size for p in (path, wal) if p.exists())


@asynccontextmanager
async def open_sqlite(path: Path) -> AsyncIterator[SqliteDatabase]:
    """Open (and create) DuckLM's SQLite file with WAL and a busy timeout.

    WAL lets a CLI read while a server writes; the busy timeout turns a brief lock into a
    short wait (on the worker thread) instead of a "database is locked" error.
    """
    await asyncio.to_thread(create_private_file, path)
    worker = ConnectionThread("ducklm-sqlite")
    try:
        conn = await worker.run(lambda: _connect(path))
        try:
            yield SqliteDatabase(conn, worker, path)
        finally:
            await worker.run(conn.close)
    finally:
        worker.stop()


def _connect(path: Path) -> sqlite3.Connection:
    """Connect, set the pragmas, and bring the tables up to this schema. Blocking."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=5000")
        _migrate(conn)
        conn.executescript(SCHEMA)
        _one_running_run(conn)
        conn.commit()
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring a `runs` table created by an older DuckLM up to this schema. Blocking."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(runs)").fetchall()}
    if not columns:  # a new file: the schema creates the table
        return
    if "task_id" not in columns:  # runs before tasks existed: each is its own task
        conn.execute("ALTER TABLE runs ADD COLUMN task_id TEXT")
        conn.execute("UPDATE runs SET task_id = run_id")
    if "owner" not in columns:  # runs before recovery existed: no owner process recorded
        conn.execute("ALTER TABLE runs ADD COLUMN owner TEXT")
    if "cancel_requested" not in columns:  # runs before another process could cancel them
        conn.execute("ALTER TABLE runs ADD COLUMN cancel_requested REAL")
    if "kind" not in columns:  # runs before reviews ran behind the answer: all turns
        conn.execute("ALTER TABLE runs ADD COLUMN kind TEXT")


def _one_running_run(conn: sqlite3.Connection) -> None:
    # An older file may hold two running runs of one thread (nothing forbade it); the
    # guard then waits until recovery or the runs' ends leave at most one.
    try:
        conn.execute(ONE_RUNNING_RUN)
    except sqlite3.IntegrityError:
        log.warning("a thread has two running runs; one run per thread is not enforced yet")
