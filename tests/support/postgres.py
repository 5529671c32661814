"""A PostgreSQL database for tests: a fresh schema per test on `DUCK_TEST_DATABASE_URL`.

`.ci/run` starts Debian's PostgreSQL on loopback and exports the URL
(`scripts/test-postgres.sh`). Without it the PostgreSQL tests skip, except under CI,
where they fail: CI must run them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
import pytest

from ducklm.config.settings import Settings

# Read at import: the autouse fixture that hides the machine's DUCK_* variables runs first.
TEST_DATABASE_URL = os.environ.get("DUCK_TEST_DATABASE_URL")


def require_postgres() -> str:
    """The test server's URL; skip the test without one (fail it under CI)."""
    if TEST_DATABASE_URL:
        return TEST_DATABASE_URL
    reason = "DUCK_TEST_DATABASE_URL is unset (scripts/test-postgres.sh prints one)"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run the PostgreSQL tests")
    pytest.skip(reason)


def with_search_path(url: str, schema: str) -> str:
    """`url` with every connection's `search_path` set to `schema`."""
    joiner = "&" if "?" in url else "?"
    return f"{url}{joiner}options=-csearch_path%3D{schema}"


@asynccontextmanager
async def fresh_schema(url: str) -> AsyncIterator[str]:
    """A URL whose connections see only a new, empty schema; dropped at the end."""
    schema = f"test_{uuid.uuid4().hex[:16]}"
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield with_search_path(url, schema)
    finally:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def on_backend(settings: Settings, database_url: str | None) -> Settings:
    """`settings` with DuckLM's tables and checkpoints on `database_url`'s backend."""
    return settings.model_copy(update={"database_url": database_url})
