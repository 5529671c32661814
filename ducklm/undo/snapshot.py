"""One snapshot of a workspace: a commit in the shadow repository.

The tree is what `git add -A` sees (ignored files and files over the per-file limit
left out), the commit message is JSON: the modes git cannot keep (it stores only
0644/0755; a 0600 file must come back 0600) plus whatever the caller records.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ducklm.stores.private import create_private_file
from ducklm.undo.errors import UndoError
from ducklm.undo.git import ShadowGit

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

    Raises:
        UndoError: git failed, or the workspace is over `limits.max_bytes`.
    """
    async with git.lock(workspace):
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
        survey = await _survey(workspace, names, limits)
        await _exclude(git, workspace, survey.left_out)
        await git.run("add", "-A", workspace=workspace)
        present = [p for p in force if p in survey.present and p not in survey.left_out]
        if present:
            await git.run("add", "-f", "--", *present, workspace=workspace)
        tree = (await git.run("write-tree", workspace=workspace)).decode().strip()
    snap = Snapshot(
        "", tree, survey.modes, len(survey.present), survey.size, survey.left_out, meta or {}
    )
    if not commit:
        return snap
    return dataclasses.replace(snap, commit=await commit_snapshot(git, snap, parent, snap.meta))


async def commit_snapshot(
    git: ShadowGit, snap: Snapshot, parent: str | None, meta: dict[str, Any]
) -> str:
    """A commit of `snap`'s tree whose message holds its modes and `meta`; its id."""
    message = json.dumps({"modes": snap.modes, **meta}, sort_keys=True)
    args = ["commit-tree", snap.tree, "-m", message]
    if parent:
        args += ["-p", parent]
    return (await git.run(*args)).decode().strip()


@dataclass(frozen=True)
class _Survey:
    present: frozenset[str]
    modes: dict[str, int]
    size: int
    left_out: tuple[str, ...]


async def _survey(workspace: Path, names: list[str], limits: Limits) -> _Survey:
    survey = await asyncio.to_thread(_stat_all, workspace, names, limits.max_file_bytes)
    if survey.size > limits.max_bytes:
        raise UndoError(TOO_LARGE.format(size=survey.size // MB, limit=limits.max_bytes // MB))
    return survey


def _stat_all(workspace: Path, names: list[str], max_file: int) -> _Survey:
    present: set[str] = set()
    modes: dict[str, int] = {}
    left_out: list[str] = []
    size = 0
    for name in names:
        try:
            info = os.lstat(workspace / name)
        except (FileNotFoundError, NotADirectoryError):
            continue
        if stat.S_ISDIR(info.st_mode):
            continue  # a folder named by a file tool: `add -f` would take all of it
        present.add(name)
        if not stat.S_ISREG(info.st_mode):
            continue
        if info.st_size > max_file:
            left_out.append(name)
            continue
        size += info.st_size
        mode = stat.S_IMODE(info.st_mode)
        if mode != default_mode(mode):
            modes[name] = mode
    return _Survey(frozenset(present), modes, size, tuple(left_out))


def default_mode(mode: int) -> int:
    """The mode git gives a file back: 0755 when its owner may run it, else 0644."""
    return 0o755 if mode & stat.S_IXUSR else 0o644


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
