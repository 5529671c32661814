"""Pruning old checkpoints without breaking any thread.

LangGraph's SQLite saver keeps every checkpoint of every thread forever. Pruning deletes
the old ones, but never one a thread still needs:

- the newest `keep_last` checkpoints of each thread (always at least the latest), and
  with `older_than_days` every checkpoint younger than that;
- every ancestor a kept checkpoint is rebuilt from. DuckLM's `messages` is a
  `DeltaChannel`: a checkpoint stores only its step's new messages, and the full list is
  rebuilt by walking parents back to the nearest one holding a snapshot (written every
  100 message updates). That whole chain stays; a missing link would silently lose
  messages. What is left to delete are checkpoints behind a snapshot and branches no
  kept checkpoint descends from (the abandoned side of a replay's fork);
- anything of a thread whose task is running right now (it is skipped whole).

A pending interrupt lives in the writes of its thread's latest checkpoint, which is
always kept. `prune` is blocking SQLite work: call it through `asyncio.to_thread`, or
call `prune_configured`, which also covers PostgreSQL (`ducklm.stores.prune.postgres`).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3

import psycopg

from ducklm.config.settings import Settings
from ducklm.stores import open_database
from ducklm.stores.prune.postgres import prune_postgres
from ducklm.stores.prune.rules import Progress, PrunePolicy, PruneReport
from ducklm.stores.prune.sqlite import prune

__all__ = ["PrunePolicy", "PruneReport", "auto_prune", "prune", "prune_configured"]

log = logging.getLogger(__name__)


async def auto_prune(settings: Settings) -> PruneReport | None:
    """The automatic policy (`DUCK_PRUNE_KEEP_LAST`, `DUCK_PRUNE_OLDER_THAN_DAYS`), if set.

    The server runs this in the background at start; a failure is logged, never raised.
    """
    if settings.prune_keep_last is None and settings.prune_older_than_days is None:
        return None
    policy = PrunePolicy(settings.prune_keep_last or 1, settings.prune_older_than_days)
    try:
        report = await prune_configured(settings, policy)
    except (sqlite3.Error, psycopg.Error, OSError):
        log.exception("pruning checkpoints at start failed")
        return None
    log.info(
        "pruned %d of %d checkpoints: %d -> %d bytes",
        report.deleted,
        report.checkpoints,
        report.size_before,
        report.size_after,
    )
    return report


async def prune_configured(
    settings: Settings,
    policy: PrunePolicy,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> PruneReport:
    """Prune where `settings` keep checkpoints: the SQLite file, or PostgreSQL."""
    if settings.database_url is None:
        return await asyncio.to_thread(
            prune,
            settings.files.checkpoints,
            settings.files.database,
            policy,
            dry_run=dry_run,
            progress=progress,
        )
    async with open_database(settings.database_url) as db:
        return await prune_postgres(db, policy, dry_run=dry_run, progress=progress)
