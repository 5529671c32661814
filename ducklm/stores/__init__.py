"""DuckLM's own tables: tasks and their runs, audit events, conversations, rules.

LangGraph's checkpointer keeps the graph state beside them; these tables hold what DuckLM
needs besides. They live in SQLite (a connection on a thread of its own) or PostgreSQL
(psycopg async): no query runs on the event loop's thread either way (`ducklm.stores.db`).
"""

from ducklm.stores.approvals import ApprovalRule, ApprovalRules
from ducklm.stores.audit import AuditLog, AuditRecord
from ducklm.stores.backend import is_postgres_url, open_database, require_database
from ducklm.stores.conversations import Conversation, Conversations
from ducklm.stores.db import Database, DatabaseUnavailable, ThreadRunning
from ducklm.stores.intents import CommandIntents
from ducklm.stores.run_stores import RunStores
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
    "DatabaseUnavailable",
    "RunRecord",
    "RunStores",
    "Runs",
    "TaskRecord",
    "TaskStatus",
    "Tasks",
    "ThreadRunning",
    "is_postgres_url",
    "open_database",
    "require_database",
]
