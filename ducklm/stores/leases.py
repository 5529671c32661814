"""Run leases (PostgreSQL): which process holds a running run, and until when.

A run's row carries its lease: `lease_owner` (a random id per opening of the stores,
so a restarted or cloned process never passes for the old one) and `lease_until` (a
time on the database's clock, so workers' clocks need not agree). The owner renews
all its leases at once every heartbeat; a lease nobody renewed for three heartbeats
has expired, and any process may take its run over (`take_expired`), one process per
run: the rows are locked with `FOR UPDATE SKIP LOCKED` inside one `UPDATE ...
RETURNING`. SQLite has no leases: one machine, and `ducklm.runtime.recovery` at start.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from ducklm.stores.db import Database, Row

NOW = "EXTRACT(EPOCH FROM clock_timestamp())::float8"
"""The database's clock, in Unix seconds: every worker compares leases against it."""
LEASE_LOST = "its server stopped renewing its lease"
"""Why a run whose lease ran out was taken over (its error, and a queued run's)."""

HEARTBEATS_TO_EXPIRY = 3


@dataclass
class RunLeases:
    """The leases of the runs this opening of the stores starts or takes over."""

    db: Database
    heartbeat_s: float = 2.0
    worker_id: str = field(default_factory=lambda: secrets.token_hex(8))

    @property
    def ttl_s(self) -> float:
        """How long a lease lasts without a renewal."""
        return self.heartbeat_s * HEARTBEATS_TO_EXPIRY

    def insert_columns(self) -> tuple[str, str, tuple[object, ...]]:
        """The columns, value expressions and parameters a run's INSERT adds for its lease."""
        return ", lease_owner, lease_until", f", ?, {NOW} + ?", (self.worker_id, self.ttl_s)

    async def hold(self, run_id: str) -> None:
        """Lease `run_id` (a deferred review run going on again) to this worker."""
        await self.db.execute(
            f"UPDATE runs SET lease_owner = ?, lease_until = {NOW} + ? WHERE run_id = ?",
            (self.worker_id, self.ttl_s, run_id),
        )

    async def renew(self) -> list[str]:
        """Extend every lease this worker holds on a live run; the run ids renewed."""
        rows = await self.db.fetchall(
            f"UPDATE runs SET lease_until = {NOW} + ? WHERE lease_owner = ? "
            "AND status IN ('running', 'deferred') RETURNING run_id",
            (self.ttl_s, self.worker_id),
        )
        return [row[0] for row in rows]

    async def take_expired(self, columns: str, reason: str, limit: int) -> list[Row]:
        """End up to `limit` runs whose lease expired, as `interrupted` with `reason`.

        Returns their rows (`columns`). Call it inside a transaction with what must
        land together with the take-over; concurrent callers never get the same run.
        """
        return await self.db.fetchall(
            f"UPDATE runs SET status = 'interrupted', finished_at = {NOW}, error = ?, "
            "lease_owner = ?, lease_until = NULL WHERE run_id IN ("
            "SELECT run_id FROM runs WHERE status IN ('running', 'deferred') "
            f"AND lease_until < {NOW} ORDER BY lease_until LIMIT ? FOR UPDATE SKIP LOCKED"
            f") RETURNING {columns}",
            (reason, self.worker_id, limit),
        )
