"""Command intents: a record written before a command starts and closed when it ends.

LangGraph re-runs a node from its top when a run resumes, so a command that was running
when the process died would run again. An open intent says "this call already started":
the tool node then reports "interrupted, outcome unknown" instead of running it twice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ducklm.stores.db import Database


@dataclass(frozen=True)
class Intent:
    """A command that was started."""

    call_id: str
    command: str
    started_at: float
    finished_at: float | None
    exit_code: int | None


class CommandIntents:
    """The `command_intents` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def begin(self, call_id: str, thread_id: str, command: str) -> bool:
        """Record that `call_id` is about to start; `False` if it had started before."""
        inserted = await self._db.execute(
            "INSERT INTO command_intents (call_id, thread_id, command, started_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (call_id) DO NOTHING",
            (call_id, thread_id, command, time.time()),
        )
        return inserted > 0

    async def get(self, call_id: str) -> Intent | None:
        """The intent of `call_id`, if that call was ever started."""
        row = await self._db.fetchone(
            "SELECT call_id, command, started_at, finished_at, exit_code "
            "FROM command_intents WHERE call_id = ?",
            (call_id,),
        )
        return Intent(*row) if row else None

    async def finish(self, call_id: str, exit_code: int | None) -> None:
        """Record that `call_id` ended."""
        await self._db.execute(
            "UPDATE command_intents SET finished_at = ?, exit_code = ? WHERE call_id = ?",
            (time.time(), exit_code, call_id),
        )
