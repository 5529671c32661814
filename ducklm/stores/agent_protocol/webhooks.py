"""The door's webhook deliveries (`ap_webhooks`): what became of each run's webhook.

One row per delivery, delivered or failed, with its attempts and the last status or
error; the sending itself is `ducklm.server.agent_protocol.webhooks.delivery`'s.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass
from typing import Literal

from ducklm.stores import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS ap_webhooks (
    run_id      TEXT NOT NULL,
    url         TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    attempts    INTEGER NOT NULL,
    status_code INTEGER,
    error       TEXT,
    at          REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS ap_webhooks_run ON ap_webhooks (run_id);
"""


@dataclass(frozen=True)
class Delivery:
    """What became of one run's webhook."""

    run_id: str
    url: str
    outcome: Literal["delivered", "failed"]
    attempts: int
    status_code: int | None
    error: str | None
    at: float


class WebhookLog:
    """The `ap_webhooks` table: every delivery, by run id."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @classmethod
    async def open(cls, db: Database) -> WebhookLog:
        """The log on `db`, its table created if missing."""
        await db.create_tables(SCHEMA)
        return cls(db)

    async def record(self, delivery: Delivery) -> None:
        """Keep what became of one delivery."""
        await self._db.execute(
            "INSERT INTO ap_webhooks (run_id, url, outcome, attempts, status_code, error, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            astuple(delivery),
        )

    async def deliveries(self, run_id: str) -> list[Delivery]:
        """The recorded deliveries of `run_id`'s webhook, oldest first."""
        rows = await self._db.fetchall(
            "SELECT run_id, url, outcome, attempts, status_code, error, at FROM ap_webhooks "
            "WHERE run_id = ? ORDER BY at",
            (run_id,),
        )
        return [Delivery(*row) for row in rows]
