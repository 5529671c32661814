"""Pruning old checkpoints in LangGraph's SQLite file, by `ducklm.stores.prune`'s rules.

`prune` is blocking SQLite work: call it through `asyncio.to_thread`, or call
`ducklm.stores.prune.prune_configured`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from ducklm.stores.prune.rules import (
    DELTA_CHANNEL,
    Node,
    Progress,
    PrunePolicy,
    PruneReport,
    batches,
    select_deletable,
)


def database_size(path: Path) -> int:
    """Bytes of an SQLite file and its write-ahead log."""
    wal = path.with_name(path.name + "-wal")
    return sum(p.stat().st_size for p in (path, wal) if p.exists())


def prune(
    checkpoint_db: Path,
    duck_db: Path,
    policy: PrunePolicy,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
    now: float | None = None,
) -> PruneReport:
    """Delete the checkpoints `policy` lets go, then VACUUM. Blocking: run it on a thread."""
    say = progress or (lambda _: None)
    report = PruneReport(size_before=database_size(checkpoint_db), dry_run=dry_run)
    busy = _running_threads(duck_db)
    conn = sqlite3.connect(checkpoint_db, timeout=30, isolation_level=None)
    try:
        say("scanning checkpoints")
        doomed = _plan(conn, policy, busy, report, now or time.time())
        report.deleted = len(doomed)
        if doomed and not dry_run:
            say(f"deleting {len(doomed)} checkpoints")
            _delete(conn, doomed)
            say("vacuuming")
            report.vacuumed = _vacuum(conn)
    finally:
        conn.close()
    report.size_after = database_size(checkpoint_db)
    return report


def _plan(
    conn: sqlite3.Connection,
    policy: PrunePolicy,
    busy: set[str],
    report: PruneReport,
    now: float,
) -> list[tuple[str, str, str]]:
    serde = JsonPlusSerializer()
    doomed: list[tuple[str, str, str]] = []
    for thread_id, ns in conn.execute(
        "SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints"
    ).fetchall():
        report.threads += 1
        rows = conn.execute(
            "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints "
            "WHERE thread_id = ? AND checkpoint_ns = ?",
            (thread_id, ns),
        ).fetchall()
        report.checkpoints += len(rows)
        if thread_id in busy:
            report.skipped_threads.append(thread_id)
            continue
        seeded = _seed_probe(conn, serde, thread_id, ns)
        ids, kept_for_state = select_deletable(
            [Node(cid, parent) for cid, parent in rows], policy, has_seed=seeded, now=now
        )
        report.kept_for_state += kept_for_state
        doomed += [(thread_id, ns, cid) for cid in ids]
    return doomed


def _seed_probe(
    conn: sqlite3.Connection, serde: JsonPlusSerializer, thread_id: str, ns: str
) -> Callable[[str], bool]:
    def has_seed(checkpoint_id: str) -> bool:
        row = conn.execute(
            "SELECT type, checkpoint FROM checkpoints "
            "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (thread_id, ns, checkpoint_id),
        ).fetchone()
        if row is None:
            return False
        checkpoint = serde.loads_typed((row[0], row[1]))
        return DELTA_CHANNEL in (checkpoint.get("channel_values") or {})

    return has_seed


def _delete(conn: sqlite3.Connection, doomed: list[tuple[str, str, str]]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        for batch in batches(doomed):
            for table in ("writes", "checkpoints"):
                conn.executemany(
                    f"DELETE FROM {table} "
                    "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                    batch,
                )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _vacuum(conn: sqlite3.Connection) -> bool:
    # VACUUM needs a moment with no other reader; a busy server makes it give up, and
    # then the freed pages are still reused by later checkpoints.
    try:
        conn.execute("VACUUM")
    except sqlite3.OperationalError:
        return False
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return True


def _running_threads(duck_db: Path) -> set[str]:
    if not duck_db.exists():
        return set()
    conn = sqlite3.connect(duck_db, timeout=30)
    try:
        rows = conn.execute("SELECT DISTINCT thread_id FROM tasks WHERE status = 'running'")
        return {row[0] for row in rows.fetchall()}
    except sqlite3.OperationalError:  # no tasks table yet
        return set()
    finally:
        conn.close()
