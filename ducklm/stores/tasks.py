"""Tasks: one message's work on a thread, across the runs its questions split it into.

A run ends at each question (an approval, a password); the person's answer starts the
next run of the same task. The task row holds what a client lists and waits on: the
message, the latest status and the answer.
"""

from __future__ import annotations

import builtins
import time
from dataclasses import dataclass
from typing import Literal

from ducklm.stores.db import Database

TaskStatus = Literal["running", "interrupted", "completed", "failed", "cancelled"]
OPEN_STATUSES: frozenset[str] = frozenset({"running", "interrupted"})
_COLUMNS = "task_id, thread_id, message, status, created_at, updated_at, answer, error"


@dataclass(frozen=True)
class TaskRecord:
    """A task as stored."""

    task_id: str
    thread_id: str
    message: str
    status: TaskStatus
    created_at: float
    updated_at: float
    answer: str | None
    error: str | None

    @property
    def is_open(self) -> bool:
        """Running, or waiting for a person's answer."""
        return self.status in OPEN_STATUSES


class Tasks:
    """The `tasks` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def start(self, task_id: str, thread_id: str, message: str) -> None:
        """Record a new task."""
        now = time.time()
        await self._db.execute(
            f"INSERT INTO tasks ({_COLUMNS}) VALUES (?, ?, ?, 'running', ?, ?, NULL, NULL)",
            (task_id, thread_id, message, now, now),
        )

    async def set_status(
        self,
        task_id: str,
        status: TaskStatus,
        *,
        answer: str | None = None,
        error: str | None = None,
    ) -> None:
        """Move `task_id` to `status`; `answer` and `error` replace the stored ones."""
        await self._db.execute(
            "UPDATE tasks SET status = ?, updated_at = ?, answer = ?, error = ? WHERE task_id = ?",
            (status, time.time(), answer, error, task_id),
        )

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task `task_id`, or `None`."""
        rows = await self._select("WHERE task_id = ?", (task_id,))
        return rows[0] if rows else None

    async def latest(self, thread_id: str) -> TaskRecord | None:
        """The newest task of `thread_id`, or `None`."""
        rows = await self._select(
            "WHERE thread_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1", (thread_id,)
        )
        return rows[0] if rows else None

    async def list(
        self, thread_id: str | None = None, *, limit: int = 50
    ) -> builtins.list[TaskRecord]:
        """Tasks, newest first, of one thread or all."""
        if thread_id is None:
            return await self._select("ORDER BY created_at DESC, rowid DESC LIMIT ?", (limit,))
        return await self._select(
            "WHERE thread_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?", (thread_id, limit)
        )

    async def open_tasks(self) -> builtins.list[TaskRecord]:
        """Tasks still running or waiting, oldest first."""
        return await self._select(
            "WHERE status IN ('running', 'interrupted') ORDER BY created_at", ()
        )

    async def _select(self, where: str, params: tuple[object, ...]) -> builtins.list[TaskRecord]:
        rows = await self._db.fetchall(f"SELECT {_COLUMNS} FROM tasks {where}", params)
        return [TaskRecord(*row) for row in rows]
