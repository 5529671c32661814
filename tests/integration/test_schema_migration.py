"""A data dir written by an older DuckLM opens, and its runs become tasks of their own."""

from __future__ import annotations

from pathlib import Path

import aiosqlite

from ducklm.stores import Tasks, open_database

OLD_RUNS = """
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, status TEXT NOT NULL,
    started_at REAL NOT NULL, finished_at REAL, answer TEXT, error TEXT
);
INSERT INTO runs VALUES ('r1', 't1', 'completed', 1.0, 2.0, 'hi', NULL);
"""


async def test_runs_without_task_ids_are_migrated(tmp_path: Path) -> None:
    path = tmp_path / "ducklm.sqlite"
    async with aiosqlite.connect(path) as conn:
        await conn.executescript(OLD_RUNS)
        await conn.commit()
    async with open_database(path) as db:
        assert await db.fetchall("SELECT run_id, task_id FROM runs") == [("r1", "r1")]
        assert await db.fetchall("SELECT owner, cancel_requested FROM runs") == [(None, None)]
        tasks = Tasks(db)
        await tasks.start("task-1", "t1", "hello")
        found = await tasks.get("task-1")
        assert found is not None
        assert found.status == "running"
        assert found.is_open
    async with open_database(path) as db:  # a second open finds nothing to migrate
        assert [t.task_id for t in await Tasks(db).list("t1")] == ["task-1"]
