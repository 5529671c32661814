"""Approval rules: actions a person allowed forever, kept across restarts."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ducklm.stores.db import MAX_ROW_ID, Database


@dataclass(frozen=True)
class ApprovalRule:
    """A stored rule: `tool` with exactly this normalized `pattern` runs without asking."""

    id: int
    tool: str
    pattern: str
    description: str
    created_at: float


class ApprovalRules:
    """The `approval_rules` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, tool: str, pattern: str, description: str = "") -> ApprovalRule:
        """Remember that `tool` with `pattern` is allowed; adding it twice keeps one rule."""
        await self._db.execute(
            "INSERT INTO approval_rules (tool, pattern, description, created_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (tool, pattern) DO NOTHING",
            (tool, pattern, description, time.time()),
        )
        rule = await self.find(tool, pattern)
        assert rule is not None  # just inserted, or already there
        return rule

    async def find(self, tool: str, pattern: str) -> ApprovalRule | None:
        """The rule for exactly `tool` and `pattern`, if any."""
        row = await self._db.fetchone(
            "SELECT id, tool, pattern, description, created_at FROM approval_rules "
            "WHERE tool = ? AND pattern = ?",
            (tool, pattern),
        )
        return ApprovalRule(*row) if row else None

    async def list(self) -> list[ApprovalRule]:
        """Every rule, oldest first."""
        rows = await self._db.fetchall(
            "SELECT id, tool, pattern, description, created_at FROM approval_rules ORDER BY id"
        )
        return [ApprovalRule(*row) for row in rows]

    async def revoke(self, rule_id: int) -> bool:
        """Delete rule `rule_id`; `False` when there was none."""
        if not 0 < rule_id <= MAX_ROW_ID:  # no such row; and SQLite would overflow on it
            return False
        return await self._db.execute("DELETE FROM approval_rules WHERE id = ?", (rule_id,)) > 0
