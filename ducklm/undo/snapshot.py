"""One snapshot of a workspace: a commit in the shadow repository.

The tree is what `git add -A` sees (ignored files and files over the per-file limit
left out), the commit message is JSON: the modes git cannot keep (it stores only
0644/0755; a 0600 file must come back 0600) plus whatever the caller records.

Every shell command gets two snapshots, so the usual one must cost little on a large
workspace: the first in a process lists and surveys every file and `add -A`s them
(`_full`); the next, while the index is as DuckLM's last snapshot left it, ask git's
stat cache what changed and hand git only those files (`_update`). A snapshot with
nothing changed writes nothing and reuses the last tree.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ducklm.stores.private import create_private_file
from ducklm.undo.errors import UndoError
from ducklm.undo.git import ShadowGit
from ducklm.undo.survey import Survey, resurvey, survey

TOO_LARGE = (
    "the workspace holds {size} MB in files DuckLM would keep, over the undo limit of "
    "{limit} MB (DUCK_UNDO_MAX_BYTES): this step has no checkpoint and cannot be undone"
)
MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """How much a checkpoint may cover (`DUCK_UNDO_MAX_BYTES`, `DUCK_UNDO_MAX_FILE_BYTES`)."""

    max_bytes: int
    max_file_bytes: int


@dataclass(frozen=True)
class Snapshot:
    """A recorded state of a workspace."""

    commit: str
    """The commit that holds it; empty until a record makes it."""
    tree: str
    modes: dict[str, int]
    """Files whose mode git would not restore by itself."""
    files: int = 0
    size: int = 0
    left_out: tuple[str, ...] = ()
    """Files over the per-file limit: not covered."""
    meta: dict[str, Any] = field(default_factory=dict)


async def take_snapshot(
    git: ShadowGit,
    workspace: Path,
    limits: Limits,
    *,
    parent: str | None = None,
    force: tuple[str, ...] = (),
    meta: dict[str, Any] | None = None,
    commit: bool = True,
    known: dict[Path, Known] | None = None,
) -> Snapshot:
    """Record `workspace` as it is now.

    Args:
        git: The shadow repository.
        workspace: The resolved workspace folder.
        limits: Size limits; over `max_bytes` nothing is recorded.
        parent: The snapshot this one follows (its commit's parent).
        force: Paths to keep even if the workspace's `.gitignore` ignores them (the
            file a `file_write` names).
        meta: More JSON fields for the commit message.
        commit: Make the commit; without it only the tree is written (a change record
            makes the commit once it knows what changed).
        known: The last snapshot of each workspace this process took, kept here; while
            the workspace's index is as that snapshot left it, only what changed since
            is surveyed and read (`_update`).

    Raises:
        UndoError: git failed, or the workspace is over `limits.max_bytes`.
    """
    known = {} if known is None else known
    async with git.lock(workspace):
        last = known.pop(workspace, None)  # until the index is written again
        done = await _update(git, workspace, limits, force, last) if last else None
        found, tree = done or await _full(git, workspace, limits, force)
        stamp = await asyncio.to_thread(_stamp, git.index_file(workspace))
        same = last is not None and (last.tree, last.survey.modes) == (tree, found.modes)
        known[workspace] = Known(stamp, tree, found, last.plain if last and same else "")
        snap = Snapshot(
            "", tree, found.modes, len(found.present), found.size, found.left_out, meta or {}
        )
        if commit:
            made = await _commit(git, snap, parent, known, workspace)
            snap = dataclasses.replace(snap, commit=made)
    return snap


async def _commit(
    git: ShadowGit, snap: Snapshot, parent: str | None, known: dict[Path, Known], workspace: Path
) -> str:
    """`snap`'s commit, or the last plain one of the same tree.

    A plain commit (no parent, no fields) is a step's checkpoint: a step that changed
    nothing since the last one makes no new object.
    """
    if parent or snap.meta:
        return await commit_snapshot(git, snap, parent, snap.meta)
    now = known[workspace]
    if not now.plain:
        known[workspace] = now = dataclasses.replace(
            now, plain=await commit_snapshot(git, snap, None, {})
        )
    return now.plain


@dataclass(frozen=True)
class Known:
    """A workspace's index as DuckLM's last snapshot of it left it."""

    stamp: tuple[int, int, int]
    """The index file's inode, size and mtime: another writer changes them."""
    tree: str
    survey: Survey
    plain: str = ""
    """A commit of `tree` with no parent and no fields, once one was made."""


async def _full(
    git: ShadowGit, workspace: Path, limits: Limits, force: tuple[str, ...]
) -> tuple[Survey, str]:
    """Survey every file git lists, and add them all."""
    listed = await git.run(
        "ls-files",
        "-z",
        "--cached",
        "--others",
        "--exclude-standard",
        workspace=workspace,
        exclude=False,  # the files left out last time may fit now
    )
    names = sorted({*(n for n in listed.decode().split("\0") if n), *force})
    found = await asyncio.to_thread(survey, str(workspace), names, limits.max_file_bytes)
    _check_size(found, limits)
    await _exclude(git, workspace, found.left_out)
    await git.run("add", "-A", workspace=workspace)
    return found, await _add_forced(git, workspace, found, force)


async def _update(
    git: ShadowGit, workspace: Path, limits: Limits, force: tuple[str, ...], last: Known
) -> tuple[Survey, str] | None:
    """Survey and add only what changed since `last`; `None` when that cannot be known.

    git's stat cache (in the index as `last` left it) names the changed and removed
    files, `ls-files --others` the new ones; `resurvey` adds the racy ones.
    """
    if await asyncio.to_thread(_stamp, git.index_file(workspace)) != last.stamp:
        return None  # another process's snapshot wrote the index since
    dirty, new = await asyncio.gather(
        git.run("diff-files", "--name-only", "-z", "--ignore-submodules=all", workspace=workspace),
        git.run("ls-files", "-z", "--others", "--exclude-standard", workspace=workspace),
    )
    candidates = {n for n in (dirty + new).decode().split("\0") if n} | set(force)
    args = (str(workspace), last.survey, candidates, limits.max_file_bytes)
    update = await asyncio.to_thread(resurvey, *args)
    if update is None:
        return None
    found, changed = update
    _check_size(found, limits)
    if not changed and not force:
        return found, last.tree  # the index holds this tree already
    if changed:
        await git.run(
            "update-index", "--add", "--remove", "--replace", "-z", "--stdin",
            workspace=workspace, stdin="\0".join(changed).encode() + b"\0",
        )  # fmt: skip
    return found, await _add_forced(git, workspace, found, force)


async def _add_forced(
    git: ShadowGit, workspace: Path, found: Survey, force: tuple[str, ...]
) -> str:
    """Add the files a file tool names even if ignored; the index's tree."""
    present = [p for p in force if p in found.present and p not in found.left_out]
    if present:
        await git.run("add", "-f", "--", *present, workspace=workspace)
    return (await git.run("write-tree", workspace=workspace)).decode().strip()


def _stamp(path: Path) -> tuple[int, int, int]:
    try:
        info = path.stat()
    except FileNotFoundError:
        return (0, 0, 0)
    return (info.st_ino, info.st_size, info.st_mtime_ns)


async def commit_snapshot(
    git: ShadowGit, snap: Snapshot, parent: str | None, meta: dict[str, Any]
) -> str:
    """A commit of `snap`'s tree whose message holds its modes and `meta`; its id."""
    message = json.dumps({"modes": snap.modes, **meta}, sort_keys=True)
    args = ["commit-tree", snap.tree, "-m", message]
    if parent:
        args += ["-p", parent]
    return (await git.run(*args)).decode().strip()


def _check_size(found: Survey, limits: Limits) -> None:
    if found.size > limits.max_bytes:
        raise UndoError(TOO_LARGE.format(size=found.size // MB, limit=limits.max_bytes // MB))


async def _exclude(git: ShadowGit, workspace: Path, left_out: tuple[str, ...]) -> None:
    # Anchored, with glob characters escaped: each pattern names exactly one file.
    lines = "".join("/" + _escape(name) + "\n" for name in left_out)
    path = git.exclude_file(workspace)
    await asyncio.to_thread(_write_if_changed, path, lines)
    if left_out:
        # Kept before it grew: drop it from the index, or `add -A` would keep the old copy.
        # `-f`: the index differs from the file and from HEAD (there is none), which
        # plain `rm --cached` refuses; the file itself is never touched.
        await git.run(
            "rm", "-q", "-f", "--cached", "--ignore-unmatch", "--", *left_out,
            workspace=workspace,
        )  # fmt: skip


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text() == text:
            return
    except FileNotFoundError:
        pass
    create_private_file(path).write_text(text)  # it names the workspace's files


def _escape(name: str) -> str:
    return "".join("\\" + c if c in "*?[]\\!#" else c for c in name)
