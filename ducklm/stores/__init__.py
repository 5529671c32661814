"""DuckLM's own SQLite tables: tasks and their runs, audit events, conversations, rules.

LangGraph's checkpointer keeps the graph state in its own file; these tables hold what
DuckLM needs beside it. All access is through `aiosqlite`, so no query runs on the event
loop's thread.
"""

from ducklm.stores.approvals import ApprovalRule, ApprovalRules
from ducklm.stores.audit import AuditLog, AuditRecord
from ducklm.stores.conversations import Conversation, Conversations
from ducklm.stores.db import Database, open_database
from ducklm.stores.intents import CommandIntents
from ducklm.stores.runs import RunRecord, Runs
from ducklm.stores.tasks import TaskRecord, Tasks, TaskStatus

__all__ = [
    "ApprovalRule",
    "ApprovalRules",
    "AuditLog",
    "AuditRecord",
    "CommandIntents",
    "Conversation",
    "Conversations",
    "Database",
    "RunRecord",
    "Runs",
    "TaskRecord",
    "TaskStatus",
    "Tasks",
    "open_database",
]
