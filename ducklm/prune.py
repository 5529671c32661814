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
call `prune_configured`, which also covers PostgreSQL (`ducklm.prune_postgres`).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from ducklm.settings import Settings
from ducklm.stores import open_database

log = logging.getLogger(__name__)

DELTA_CHANNEL = "messages"
_UUID_EPOCH_100NS = 0x01B21DD213814000
_BATCH = 500

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Node:
    """One checkpoint, as far as pruning cares."""

    id: str
    parent: str | None


@dataclass(frozen=True)
class PrunePolicy:
    """What to keep of each thread.

    The newest `keep_last` checkpoints, and, when `older_than_days` is set, every one
    younger than that.
    """

    keep_last: int = 1
    older_than_days: float | None = None


@dataclass
class PruneReport:
    """What a prune found and did.

    Sizes are bytes of the SQLite file plus its WAL, or of the PostgreSQL database.
    """

    threads: int = 0
    checkpoints: int = 0
    deleted: int = 0
    kept_for_state: int = 0
    """Old checkpoints kept because a kept checkpoint's messages are rebuilt from them."""
    skipped_threads: list[str] = field(default_factory=list)
    """Threads with a running task, left alone."""
    size_before: int = 0
    size_after: int = 0
    vacuumed: bool = False
    dry_run: bool = False


def checkpoint_time(checkpoint_id: str) -> float | None:
    """The Unix time a LangGraph checkpoint id (a UUIDv6) was made, or `None`."""
    try:
        value = uuid.UUID(checkpoint_id)
    except ValueError:
        return None
    if value.version != 6:
        return None
    ticks = ((value.int >> 80) << 12) | ((value.int >> 64) & 0x0FFF)
    return (ticks - _UUID_EPOCH_100NS) / 10_000_000


def select_deletable(
    nodes: list[Node],
    policy: PrunePolicy,
    *,
    has_seed: Callable[[str], bool],
    now: float,
) -> tuple[set[str], int]:
    """The ids of one thread's checkpoints that may go, and how many old ones must stay.

    `has_seed(id)` says whether that checkpoint holds a full `messages` snapshot (an
    ancestor walk stops there).
    """
    by_id = {n.id: n for n in nodes}
    newest_first = sorted(by_id, reverse=True)  # LangGraph's own notion of "latest"
    keep = set(newest_first[: max(policy.keep_last, 1)])
    if policy.older_than_days is not None:
        cutoff = now - policy.older_than_days * 86_400
        keep |= {cid for cid in by_id if (checkpoint_time(cid) or now) >= cutoff}
    needed: set[str] = set()
    for cid in keep:
        current: str | None = cid
        while current is not None and current in by_id and current not in needed:
            needed.add(current)
            if has_seed(current):
                break
            current = by_id[current].parent
    return set(by_id) - needed, len(needed - keep)


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
            settings.checkpoint_db,
            settings.duck_db,
            policy,
            dry_run=dry_run,
            progress=progress,
        )
    # Imported here: ducklm.prune_postgres builds on this module's planning.
    from ducklm.prune_postgres import prune_postgres  # noqa: PLC0415

    async with open_database(settings.database_url) as db:
        return await prune_postgres(db, policy, dry_run=dry_run, progress=progress)


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


def batches(items: list[tuple[str, str, str]]) -> Iterable[list[tuple[str, str, str]]]:
    """`items` in slices small enough for one statement batch."""
    for start in range(0, len(items), _BATCH):
        yield items[start : start + _BATCH]
