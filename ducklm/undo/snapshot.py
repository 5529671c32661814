"""One snapshot of a workspace: a commit in the shadow repository.

The tree is what a walk of the workspace finds (`survey.py`: every folder, file and
link, ignored or not, nested repositories' `.git` too), written straight into the
shadow store (`objects.py`); the commit message is JSON: the exact modes a git tree
cannot hold (a 0600 file, a 0700 folder), the files whose content was not kept
(`left_out`: too large, past the time bound), plus whatever the caller records.

Every shell command gets two snapshots, so the usual one must cost little: a file is
read only when its stat signature changed since the last survey (the cache, kept in
memory per workspace and on disk for the next process), and a snapshot with nothing
changed reuses the last commit.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ducklm.stores.private import create_private_file
from ducklm.undo.git import IDENTITY, ShadowGit
from ducklm.undo.survey import Budget, Folder, Survey, survey

MB = 1024 * 1024
REWRITE_CACHE = 100
"""Files read again before the cache on disk is rewritten (it only saves reading)."""


@dataclass(frozen=True)
class Limits:
    """How much one checkpoint may read (`DUCK_UNDO_MAX_BYTES`, `..._FILE_BYTES`, `..._SECONDS`)."""

    max_bytes: int
    max_file_bytes: int
    max_seconds: float = 10.0


@dataclass(frozen=True)
class Snapshot:
    """A recorded state of a workspace."""

    commit: str
    """The commit that holds it; empty until a record makes it."""
    tree: str
    modes: dict[str, int]
    """Exact modes the tree does not say."""
    files: int = 0
    size: int = 0
    left_out: dict[str, str] = field(default_factory=dict)
    """Files whose content was not kept (path -> why): their changes cannot be undone."""
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Known:
    """The last survey of a workspace in this process."""

    cache: dict[str, Folder]
    tree: str = ""
    modes: dict[str, int] = field(default_factory=dict)
    plain: str = ""
    """A commit of `tree` with no parent and no fields, once one was made."""
    unsaved: int = 0
    """Files read since the cache was last written to disk."""


async def take_snapshot(
    git: ShadowGit,
    workspace: Path,
    limits: Limits,
    *,
    parent: str | None = None,
    meta: dict[str, Any] | None = None,
    commit: bool = True,
    known: dict[Path, Known] | None = None,
) -> Snapshot:
    """Record `workspace` as it is now.

    Args:
        git: The shadow repository.
        workspace: The resolved workspace folder.
        limits: What one snapshot may read; past them files are covered but not kept.
        parent: The snapshot this one follows (its commit's parent).
        meta: More JSON fields for the commit message.
        commit: Make the commit; without it only the tree is written (a change record
            makes the commit once it knows what changed).
        known: The last survey of each workspace this process took, kept here.

    Raises:
        UndoError: git failed.
    """
    known = {} if known is None else known
    await git.ready()
    async with git.lock(workspace):
        last = known.get(workspace)
        if last is None:
            cache = await asyncio.to_thread(_load_cache, git.cache_file(workspace))
            last = known[workspace] = Known(cache, unsaved=REWRITE_CACHE)
        budget = Budget(
            limits.max_file_bytes, limits.max_bytes, time.monotonic() + limits.max_seconds
        )
        skip = str(git.root) if git.root.is_relative_to(workspace) else ""
        args = (str(workspace), git.store, last.cache, budget, skip)
        found, cache = await asyncio.to_thread(survey, *args)
        await _keep_cache(git, workspace, last, found, cache)
        snap = Snapshot(
            "", found.tree, found.modes, found.files, found.size, found.left_out, meta or {}
        )
        if commit:
            snap = dataclasses.replace(snap, commit=await _commit(git, snap, parent, last))
    return snap


async def _keep_cache(
    git: ShadowGit, workspace: Path, last: Known, found: Survey, cache: dict[str, Folder]
) -> None:
    if (last.tree, last.modes) != (found.tree, found.modes):
        last.plain = ""
    last.cache, last.tree, last.modes = cache, found.tree, found.modes
    last.unsaved += found.reread
    if last.unsaved >= REWRITE_CACHE:
        last.unsaved = 0
        await asyncio.to_thread(_save_cache, git.cache_file(workspace), cache)


async def _commit(git: ShadowGit, snap: Snapshot, parent: str | None, last: Known) -> str:
    """`snap`'s commit, or the last plain one of the same tree.

    A plain commit (no parent, no fields) is a step's checkpoint: a step that changed
    nothing since the last one makes no new object.
    """
    if parent or snap.meta:
        return await commit_snapshot(git, snap, parent, snap.meta)
    if not last.plain:
        last.plain = await commit_snapshot(git, snap, None, {})
    return last.plain


async def commit_snapshot(
    git: ShadowGit, snap: Snapshot, parent: str | None, meta: dict[str, Any]
) -> str:
    """A commit of `snap`'s tree whose message holds its modes, `left_out` and `meta`."""
    fields = {"modes": snap.modes, "left_out": snap.left_out, **meta}
    message = json.dumps(fields, sort_keys=True)
    who = f"{IDENTITY['name']} <{IDENTITY['email']}> {int(time.time())} +0000"
    head = f"tree {snap.tree}\n" + (f"parent {parent}\n" if parent else "")
    body = f"{head}author {who}\ncommitter {who}\n\n{message}\n"
    return await asyncio.to_thread(git.store.write, "commit", body.encode())


def _load_cache(path: Path) -> dict[str, Folder]:
    """The cache a process saved; empty when there is none or it cannot be read."""
    try:
        raw = json.loads(path.read_text())
        return {folder: _folder(fields) for folder, fields in raw.items()}
    except (OSError, ValueError, TypeError, IndexError):
        return {}


def _folder(fields: list[Any]) -> Folder:
    """A folder as `_save_cache` wrote it: tree, entries, modes, left out, files, size."""
    tree, entries, modes, left_out, files, size = fields
    loaded = {n: ((*e[0],), e[1], e[2], e[3], e[4]) for n, e in entries.items()}
    return Folder(loaded, tree, modes, left_out, files, size)


def _save_cache(path: Path, cache: dict[str, Folder]) -> None:
    data = {
        folder: [f.tree, f.entries, f.modes, f.left_out, f.files, f.size]
        for folder, f in cache.items()
    }
    tmp = path.with_name(path.name + ".tmp")
    create_private_file(tmp).write_text(json.dumps(data))  # it names the workspace's files
    tmp.replace(path)
