"""The tables a task's runs are recorded in, as one bundle every door shares."""

from __future__ import annotations

from dataclasses import dataclass

from ducklm.stores.audit import AuditLog
from ducklm.stores.conversations import Conversations
from ducklm.stores.db import Database
from ducklm.stores.leases import RunLeases
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
    def on(cls, db: Database, owner: ProcessOwner, *, heartbeat_s: float = 2.0) -> RunStores:
        """The stores on `db`, recording runs as `owner`'s.

        On PostgreSQL each run is also leased to this opening, renewed every
        `heartbeat_s` (`ducklm.runtime.leases`); SQLite needs no lease (one machine).
        """
        leases = RunLeases(db, heartbeat_s) if db.dialect == "postgres" else None
        runs = Runs(db, owner=owner, leases=leases)
        return cls(db, runs, AuditLog(db), Tasks(db), Conversations(db))
