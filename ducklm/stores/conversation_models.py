"""The model each conversation answers with, when the person chose one.

One row per conversation that has a choice; none means the configured model
(`config/models.yaml`). The run service reads it at each turn's start and hands it to
the run's context (`DuckContext.for_run(model=...)`), so a choice made mid-conversation
takes effect at the next turn, history untouched.
"""

from __future__ import annotations

import time

from ducklm.stores.db import Database


class ConversationModels:
    """The `conversation_models` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, thread_id: str) -> str | None:
        """The model chosen for `thread_id`, or `None` for the configured one."""
        row = await self._db.fetchone(
            "SELECT model FROM conversation_models WHERE thread_id = ?", (thread_id,)
        )
        return str(row[0]) if row else None

    async def set(self, thread_id: str, model: str | None) -> None:
        """Choose `model` for `thread_id`; `None` goes back to the configured one."""
        if model is None:
            await self._db.execute(
                "DELETE FROM conversation_models WHERE thread_id = ?", (thread_id,)
            )
            return
        await self._db.execute(
            "INSERT INTO conversation_models (thread_id, model, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (thread_id) DO UPDATE SET model = excluded.model, "
            "updated_at = excluded.updated_at",
            (thread_id, model, time.time()),
        )
