"""The tables a task's runs are recorded in, as one bundle every door shares."""

from __future__ import annotations

from dataclasses import dataclass

from ducklm.stores.audit import AuditLog
from ducklm.stores.conversations import Conversations
from ducklm.stores.db import Database
from ducklm.stores.owner import ProcessOwner
from ducklm.stores.runs import Runs
from ducklm.stores.tasks import Tasks


@dataclass(frozen=True)
class RunStores:
    """Where runs, their tasks, events and conversations are kept, on one database."""

    db: Database
    runs: Runs
    audit: AuditLog
    tasks: Tasks
    conversations: Conversations

    @classmethod
    def on(cls, db: Database, owner: ProcessOwner) -> RunStores:
        """The stores on `db`, recording runs as `owner`'s."""
        return cls(db, Runs(db, owner=owner), AuditLog(db), Tasks(db), Conversations(db))
