"""What pruning keeps of a thread: the policy, the report, and the choice of what may go.

Shared by the SQLite and the PostgreSQL prune (`ducklm.stores.prune`), which differ only
in how they read checkpoints and delete them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

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


def batches(items: list[tuple[str, str, str]]) -> Iterable[list[tuple[str, str, str]]]:
    """`items` in slices small enough for one statement batch."""
    for start in range(0, len(items), _BATCH):
        yield items[start : start + _BATCH]
