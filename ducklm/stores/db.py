"""The connection to DuckLM's SQLite file and its schema."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiosqlite

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT PRIMARY KEY,
    thread_id   TEXT NOT NULL,
    status      TEXT NOT NULL,
    started_at  REAL NOT NULL,
    finished_at REAL,
    answer      TEXT,
    error       TEXT,
    task_id     TEXT,
    owner       TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_thread ON runs (thread_id, started_at);

CREATE TABLE IF NOT EXISTS tasks (
    task_id    TEXT PRIMARY KEY,
    thread_id  TEXT NOT NULL,
    message    TEXT NOT NULL,
    status     TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    answer     TEXT,
    error      TEXT
);
CREATE INDEX IF NOT EXISTS tasks_by_thread ON tasks (thread_id, created_at);
CREATE INDEX IF NOT EXISTS tasks_by_status ON tasks (status);

CREATE TABLE IF NOT EXISTS conversations (
    id         TEXT PRIMARY KEY,
    title      TEXT NOT NULL,
    workspace  TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);

CREATE TABLE IF NOT EXISTS events (
    thread_id TEXT NOT NULL,
    seq       INTEGER NOT NULL,
    run_id    TEXT,
    type      TEXT NOT NULL,
    ts        REAL NOT NULL,
    data      TEXT NOT NULL,
    PRIMARY KEY (thread_id, seq)
);

CREATE TABLE IF NOT EXISTS command_intents (
    call_id     TEXT PRIMARY KEY,
    thread_id   TEXT NOT NULL,
    command     TEXT NOT NULL,
    started_at  REAL NOT NULL,
    finished_at REAL,
    exit_code   INTEGER
);

CREATE TABLE IF NOT EXISTS approval_rules (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tool        TEXT NOT NULL,
    pattern     TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at  REAL NOT NULL,
    UNIQUE (tool, pattern)
);

CREATE TABLE IF NOT EXISTS memories (
    id              TEXT PRIMARY KEY,
    text            TEXT NOT NULL,
    scope           TEXT NOT NULL CHECK (scope IN ('global', 'workspace', 'conversation')),
    workspace       TEXT,
    conversation_id TEXT,
    memory_type     TEXT NOT NULL,
    importance      REAL NOT NULL,
    created_at      REAL NOT NULL,
    updated_at      REAL NOT NULL,
    superseded_by   TEXT,
    metadata        TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS memories_by_scope ON memories (scope, workspace, conversation_id);

CREATE TABLE IF NOT EXISTS experience (
    id          TEXT PRIMARY KEY,
    thread_id   TEXT NOT NULL,
    run_id      TEXT,
    score       REAL NOT NULL,
    summary     TEXT NOT NULL,
    what_worked TEXT NOT NULL,
    what_failed TEXT NOT NULL,
    lesson      TEXT NOT NULL,
    confidence  REAL NOT NULL,
    proposal_id TEXT,
    created_at  REAL NOT NULL
);
"""


class Database:
    """One `aiosqlite` connection; the stores share it.

    Several tasks use the connection at once (the runner appends audit events while a node
    stores a rule), and a commit fails while another task's statement is still open, so
    every store operation holds `lock` from its first statement to its commit.
    """

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self.conn = conn
        self.lock = asyncio.Lock()


@asynccontextmanager
async def open_database(path: Path) -> AsyncIterator[Database]:
    """Open (and create) DuckLM's SQLite file with WAL and a busy timeout.

    WAL lets a CLI read while a server writes; the busy timeout turns a brief lock into a
    short wait instead of a "database is locked" error.
    """
    conn = await aiosqlite.connect(path)
    try:
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        await conn.execute("PRAGMA busy_timeout=5000")
        await conn.executescript(SCHEMA)
        await _migrate(conn)
        await conn.commit()
        yield Database(conn)
    finally:
        await conn.close()


async def _migrate(conn: aiosqlite.Connection) -> None:
    """Bring tables created by an older DuckLM up to this schema."""
    async with conn.execute("PRAGMA table_info(runs)") as cur:
        columns = {row[1] for row in await cur.fetchall()}
    if "task_id" not in columns:  # runs before tasks existed: each is its own task
        await conn.execute("ALTER TABLE runs ADD COLUMN task_id TEXT")
        await conn.execute("UPDATE runs SET task_id = run_id")
    if "owner" not in columns:  # runs before recovery existed: no owner process recorded
        await conn.execute("ALTER TABLE runs ADD COLUMN owner TEXT")
    await conn.execute("CREATE INDEX IF NOT EXISTS runs_by_task ON runs (task_id)")
    await conn.execute("CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status)")
