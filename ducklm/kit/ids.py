"""The ids DuckLM mints: a thread (a conversation) and a task (one message's work).

Both are UUIDs, and LangGraph clients send threads as UUIDs too; they are kept as two
names so that a reader sees which one a value is. The `/v1` API calls a thread a
`conversation_id` (docs/api.md says so once); inside, it is LangGraph's `thread_id`.
"""

from __future__ import annotations

import uuid


def new_thread_id() -> str:
    """A fresh conversation (LangGraph thread) id."""
    return str(uuid.uuid4())


def new_task_id() -> str:
    """A fresh task id: one message and every run it takes (questions, restarts)."""
    return str(uuid.uuid4())
