"""DuckLM's tables in PostgreSQL, through a pool of psycopg async connections.

Several `ducklm serve` processes, on one machine or many, share one database. What an
in-process lock guarded on SQLite needs a database-side guarantee here: a unique index
allows one running run per thread, and an advisory lock per thread numbers its events.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

from ducklm.stores.db import Database, DatabaseUnavailable, Params, Row
from ducklm.stores.schema import (
    ONE_RUNNING_RUN,
    POSTGRES_EXTRAS,
    SCHEMA,
    postgres_ddl,
    postgres_sql,
    statements,
)

POOL_MAX = 10
CONNECT_TIMEOUT_S = 10
SETUP_LOCK = "ducklm schema"
SETUP_POLL_S = 0.05
"""Advisory lock key held while tables are created: two servers starting at once would
otherwise race on PostgreSQL's catalog (`CREATE TABLE IF NOT EXISTS` is not atomic)."""


class PostgresDatabase(Database):
    """A connection pool; a `transaction()` keeps one connection for its whole block."""

    dialect = "postgres"

    def __init__(self, pool: AsyncConnectionPool[AsyncConnection[Any]]) -> None:
        self.pool = pool
        self._current: ContextVar[AsyncConnection[Any] | None] = ContextVar(
            f"postgres-tx-{id(self)}", default=None
        )

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return how many rows it changed."""
        async with self._connection() as conn:
            cur = await conn.execute(postgres_sql(sql), params)
            return cur.rowcount

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement per row, in one transaction."""
        async with self._connection() as conn:
            await conn.cursor().executemany(postgres_sql(sql), list(rows))

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """The first row, or `None`."""
        async with self._connection() as conn:
            cur = await conn.execute(postgres_sql(sql), params)
            return await cur.fetchone()

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Every row of a query."""
        async with self._connection() as conn:
            cur = await conn.execute(postgres_sql(sql), params)
            return await cur.fetchall()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """One pooled connection for the block; commit at its end, roll back if it raises."""
        if self._current.get() is not None:
            yield
            return
        async with self.pool.connection() as conn:
            token = self._current.set(conn)
            try:
                async with conn.transaction():
                    yield
            finally:
                self._current.reset(token)

    async def serialize(self, key: str) -> None:
        """Hold a transaction-scoped advisory lock on `key` (released at commit)."""
        await self.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (key,))

    async def create_tables(self, ddl: str) -> None:
        """Create tables written for SQLite, under the setup lock."""
        # The lock is taken before the transaction opens: a transaction waiting for it
        # would hold up another worker's `CREATE INDEX CONCURRENTLY` (the checkpointer's
        # setup, under the same lock), which waits for every older transaction.
        async with setup_lock(self.pool), self.transaction():
            for statement in statements(postgres_ddl(ddl)):
                await self.execute(statement)

    async def size(self) -> int:
        """Bytes of the whole database (checkpoints included) on the server."""
        row = await self.fetchone("SELECT pg_database_size(current_database())")
        return int(row[0]) if row else 0

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[AsyncConnection[Any]]:
        # The pool commits a connection's transaction when it comes back (rolls back on
        # an error), so a statement outside `transaction()` commits on its own.
        current = self._current.get()
        if current is not None:
            yield current
            return
        async with self.pool.connection() as conn:
            yield conn


@asynccontextmanager
async def setup_lock(pool: AsyncConnectionPool[Any]) -> AsyncIterator[None]:
    """Hold the setup lock on a connection of `pool` for the block (any transaction mode).

    Taken by polling, each try its own short transaction: a worker blocked in
    `pg_advisory_lock` would sit in a transaction that the holder's `CREATE INDEX
    CONCURRENTLY` waits for, and neither would ever go on (three workers starting
    together did exactly that).
    """
    async with pool.connection() as conn:
        while True:
            # A tuple row whatever the pool's row factory (the checkpointer's makes dicts).
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(
                "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (SETUP_LOCK,)
            )
            row = await cursor.fetchone()
            if not conn.autocommit:
                await conn.commit()  # the session's lock stays; the transaction ends
            if row is not None and row[0]:
                break
            await asyncio.sleep(SETUP_POLL_S)
        try:
            yield
        finally:
            await conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (SETUP_LOCK,))


async def check_reachable(url: str) -> None:
    """Connect to `url` once, so a wrong URL or a stopped server fails now, and clearly.

    A pool would retry in the background and report only a timeout, 30 s later.

    Raises:
        DatabaseUnavailable: Why the connection failed, with the URL minus its password.
    """
    try:
        conn = await AsyncConnection.connect(url, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseUnavailable(
            f"cannot reach the PostgreSQL database {shown_url(url)}: {reason}. "
            "Start PostgreSQL, or fix DUCK_DATABASE_URL."
        ) from None
    await conn.close()


def shown_url(url: str) -> str:
    """`user@host:port/dbname` of a connection URL: what to name in messages and logs."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "(an unreadable DUCK_DATABASE_URL)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"{user}{parts.get('host', 'localhost')}{port}/{parts.get('dbname', '')}"


@asynccontextmanager
async def open_postgres(url: str) -> AsyncIterator[PostgresDatabase]:
    """Open a pool on `url` and create DuckLM's tables when missing.

    Raises:
        DatabaseUnavailable: The server cannot be reached (see `check_reachable`).
    """
    await check_reachable(url)
    async with AsyncConnectionPool(
        url,
        min_size=1,
        max_size=POOL_MAX,
        open=False,
        # A connection broken by a restart of PostgreSQL is replaced when taken, instead
        # of failing the statement that gets it (one round trip per checkout).
        check=AsyncConnectionPool.check_connection,
    ) as pool:
        await pool.wait()
        db = PostgresDatabase(pool)
        await db.create_tables(SCHEMA + ";\n" + ";\n".join((*POSTGRES_EXTRAS, ONE_RUNNING_RUN)))
        yield db
