"""Conversations: a thread's title and workspace, for lists and the web chat's sidebar.

The messages themselves live in the checkpoint of the thread of the same id.
"""

from __future__ import annotations

import builtins
import time
from dataclasses import dataclass

from ducklm.stores.db import Database

TITLE_CHARS = 60
_COLUMNS = "id, title, workspace, created_at, updated_at"


@dataclass(frozen=True)
class Conversation:
    """A conversation as stored."""

    id: str
    title: str
    workspace: str | None
    created_at: float
    updated_at: float


def title_from(message: str) -> str:
    """A short title from a first message: its first line, cut at a word."""
    line = " ".join(message.strip().split())
    if len(line) <= TITLE_CHARS:
        return line or "New conversation"
    return line[:TITLE_CHARS].rsplit(" ", 1)[0] + "…"


class Conversations:
    """The `conversations` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(
        self, conversation_id: str, *, title: str = "", workspace: str | None = None
    ) -> Conversation:
        """Create `conversation_id` (a no-op returning the stored one when it exists)."""
        now = time.time()
        await self._db.execute(
            f"INSERT INTO conversations ({_COLUMNS}) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO NOTHING",
            (conversation_id, title, workspace, now, now),
        )
        found = await self.get(conversation_id)
        assert found is not None  # just inserted or already there
        return found

    async def touch(self, conversation_id: str, message: str, workspace: str | None) -> None:
        """Note a new message: create the row if needed, title it if untitled, bump it."""
        now = time.time()
        await self._db.execute(
            f"INSERT INTO conversations ({_COLUMNS}) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, "
            "title = CASE WHEN conversations.title = '' THEN excluded.title "
            "ELSE conversations.title END, "
            "workspace = COALESCE(conversations.workspace, excluded.workspace)",
            (conversation_id, title_from(message), workspace, now, now),
        )

    async def rename(self, conversation_id: str, title: str) -> bool:
        """Set the title; `False` when there is no such conversation."""
        changed = await self._db.execute(
            "UPDATE conversations SET title = ?, updated_at = ? WHERE id = ?",
            (title, time.time(), conversation_id),
        )
        return changed > 0

    async def get(self, conversation_id: str) -> Conversation | None:
        """The conversation, or `None`."""
        row = await self._db.fetchone(
            f"SELECT {_COLUMNS} FROM conversations WHERE id = ?", (conversation_id,)
        )
        return Conversation(*row) if row else None

    async def list(self, *, limit: int = 200) -> builtins.list[Conversation]:
        """Conversations, most recently updated first."""
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM conversations ORDER BY updated_at DESC LIMIT ?", (limit,)
        )
        return [Conversation(*row) for row in rows]

    async def delete(self, conversation_id: str) -> bool:
        """Forget the conversation with its tasks, runs and events; `False` if unknown."""
        async with self._db.transaction():
            deleted = await self._db.execute(
                "DELETE FROM conversations WHERE id = ?", (conversation_id,)
            )
            for table in ("tasks", "runs", "events", "command_intents", "conversation_models"):
                await self._db.execute(
                    f"DELETE FROM {table} WHERE thread_id = ?", (conversation_id,)
                )
        return deleted > 0
