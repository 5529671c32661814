"""Which backend DuckLM's tables and checkpoints use: an SQLite path or a PostgreSQL URL."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path

from ducklm.config.settings import POSTGRES_SCHEMES
from ducklm.stores.db import Database
from ducklm.stores.postgres_db import check_reachable, open_postgres
from ducklm.stores.sqlite_db import open_sqlite


def is_postgres_url(location: Path | str) -> bool:
    """Whether `location` names a PostgreSQL server rather than an SQLite file."""
    return isinstance(location, str) and location.startswith(POSTGRES_SCHEMES)


def open_database(location: Path | str) -> AbstractAsyncContextManager[Database]:
    """Open DuckLM's tables: an SQLite file (a path) or a PostgreSQL database (a URL).

    Missing tables are created, and SQLite files from an older DuckLM migrated.
    """
    if is_postgres_url(location):
        return open_postgres(str(location))
    return open_sqlite(Path(location))


async def require_database(location: Path | str) -> None:
    """Fail now, clearly, when the PostgreSQL server at `location` cannot be reached.

    An SQLite file needs no check: opening it creates it.

    Raises:
        DatabaseUnavailable: Where the database is and why it cannot be reached.
    """
    if is_postgres_url(location):
        await check_reachable(str(location))
