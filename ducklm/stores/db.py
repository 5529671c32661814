"""The database seam: DuckLM's tables on SQLite (one file) or PostgreSQL (several servers).

Stores write portable SQL with `?` placeholders and standard `ON CONFLICT` clauses and
call `Database`'s methods; the two implementations adapt the rest (placeholders, column
types, how a transaction holds its connection, how writers in other processes queue).
Statements outside a `transaction()` block commit on their own; inside one, every
statement of the task that opened it joins it, so a store method called from a
transaction needs no extra argument (the block's connection is in a context variable).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal

Row = tuple[Any, ...]
Params = Sequence[Any]
Dialect = Literal["sqlite", "postgres"]

# Row ids are signed 64-bit integers in SQLite and PostgreSQL alike: larger overflow.
MAX_ROW_ID = 2**63 - 1


class ThreadRunning(RuntimeError):
    """A run of this thread is already recorded as running (here or in another process)."""


class DatabaseUnavailable(RuntimeError):
    """The configured database cannot be reached; the message says where and why."""


class Database(ABC):
    """DuckLM's own tables: statements, queries and transactions on one backend."""

    dialect: Dialect

    @abstractmethod
    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return how many rows it changed."""

    @abstractmethod
    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement once per parameter row, all in one transaction."""

    @abstractmethod
    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """The first row of a query (or of an `INSERT ... RETURNING`), or `None`."""

    @abstractmethod
    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Every row of a query."""

    @abstractmethod
    def transaction(self) -> AbstractAsyncContextManager[None]:
        """A block whose statements commit together, or not at all when it raises.

        Nested blocks join the outer one. Never `yield` to a caller inside the block: the
        transaction belongs to the task that opened it.
        """

    @abstractmethod
    async def serialize(self, key: str) -> None:
        """Inside a transaction: wait until no other transaction holds `key`, then hold it.

        SQLite already runs one write transaction at a time; PostgreSQL takes a
        transaction-scoped advisory lock, so writers in other processes queue here.
        """

    @abstractmethod
    async def create_tables(self, ddl: str) -> None:
        """Run `CREATE TABLE/INDEX IF NOT EXISTS` statements written for SQLite."""

    @abstractmethod
    async def size(self) -> int:
        """Bytes the database takes (the file plus its WAL, or PostgreSQL's database)."""
