"""Pruning old checkpoints in PostgreSQL, by the same rules as the SQLite prune.

`ducklm.stores.prune` explains what is kept. Here LangGraph's PostgreSQL saver keeps a
checkpoint's non-primitive channel values in `checkpoint_blobs`, one row per channel
version, shared by every checkpoint at that version: a `messages` snapshot is a blob (or
an inline value) at the checkpoint's own version, the probe the saver itself walks
ancestors with. Deleting a checkpoint deletes its writes; a blob goes once no remaining
checkpoint of its thread names its version. PostgreSQL reuses the freed space (autovacuum);
no `VACUUM FULL` is run, it would lock the tables every server uses.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable

from ducklm.stores.db import Database
from ducklm.stores.prune.rules import (
    DELTA_CHANNEL,
    Node,
    Progress,
    PrunePolicy,
    PruneReport,
    batches,
    select_deletable,
)

_CHECKPOINTS = (
    "SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, "
    "(c.checkpoint -> 'channel_values' -> ?) IS NOT NULL OR EXISTS ("
    " SELECT 1 FROM checkpoint_blobs b WHERE b.thread_id = c.thread_id"
    " AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = ?"
    " AND b.version = c.checkpoint -> 'channel_versions' ->> ? AND b.type <> 'empty') "
    "FROM checkpoints c"
)
_UNUSED_BLOBS = (
    "DELETE FROM checkpoint_blobs b WHERE b.thread_id = ? AND b.checkpoint_ns = ? "
    "AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id "
    "AND c.checkpoint_ns = b.checkpoint_ns "
    "AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)"
)

Key = tuple[str, str]


async def prune_postgres(
    db: Database,
    policy: PrunePolicy,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
    now: float | None = None,
) -> PruneReport:
    """Delete the checkpoints `policy` lets go; sizes are the whole database's."""
    say = progress or (lambda _: None)
    report = PruneReport(size_before=await db.size(), dry_run=dry_run)
    busy = {
        row[0]
        for row in await db.fetchall(
            "SELECT DISTINCT thread_id FROM tasks WHERE status = 'running'"
        )
    }
    say("scanning checkpoints")
    rows = await db.fetchall(_CHECKPOINTS, (DELTA_CHANNEL,) * 3)
    doomed = _plan(rows, policy, busy, report, now or time.time())
    report.deleted = len(doomed)
    if doomed and not dry_run:
        say(f"deleting {len(doomed)} checkpoints")
        await _delete(db, doomed)
    report.size_after = await db.size()
    return report


def _plan(
    rows: Iterable[tuple[object, ...]],
    policy: PrunePolicy,
    busy: set[str],
    report: PruneReport,
    now: float,
) -> list[tuple[str, str, str]]:
    threads: dict[Key, list[Node]] = defaultdict(list)
    seeded: set[str] = set()
    for thread_id, ns, checkpoint_id, parent, has_seed in rows:
        threads[(str(thread_id), str(ns))].append(
            Node(str(checkpoint_id), None if parent is None else str(parent))
        )
        if has_seed:
            seeded.add(str(checkpoint_id))
    doomed: list[tuple[str, str, str]] = []
    for (thread_id, ns), nodes in threads.items():
        report.threads += 1
        report.checkpoints += len(nodes)
        if thread_id in busy:
            report.skipped_threads.append(thread_id)
            continue
        ids, kept_for_state = select_deletable(nodes, policy, has_seed=seeded.__contains__, now=now)
        report.kept_for_state += kept_for_state
        doomed += [(thread_id, ns, cid) for cid in ids]
    return doomed


async def _delete(db: Database, doomed: list[tuple[str, str, str]]) -> None:
    async with db.transaction():
        for batch in batches(doomed):
            for table in ("checkpoint_writes", "checkpoints"):
                await db.executemany(
                    f"DELETE FROM {table} "
                    "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                    batch,
                )
        for thread_id, ns in sorted({(t, n) for t, n, _ in doomed}):
            await db.execute(_UNUSED_BLOBS, (thread_id, ns))
