"""Change records: what one call (or one undo) changed, kept as refs in the shadow repo.

A record is a commit whose tree is the workspace after the change and whose parent is
the snapshot before it; its message is JSON (thread, run, task, step, tool call id,
the files changed). Its ref is `refs/undo/<thread digest>/<nanoseconds>`, so a thread's
records list in order, survive restarts, and are written the moment a change is made,
not behind the run like the audit.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from dataclasses import dataclass
from typing import Any

from ducklm.undo.git import ShadowGit, thread_key

REF_ROOT = "refs/undo"
DIFF_LIMIT = 200_000
DIFF_CUT = "\n[... the diff goes on: {n} more bytes ...]\n"
DIR_MODE, NONE_MODE = "040000", "000000"
MANY_PATHS = 2000


@dataclass(frozen=True)
class Change:
    """One recorded change of a workspace, oldest first in a thread's list."""

    id: str
    commit: str
    """The workspace after the change."""
    before: str
    """The workspace before it."""
    meta: dict[str, Any]

    @property
    def kind(self) -> str:
        """`call` (a tool call changed files) or `undo`."""
        return str(self.meta.get("kind", "call"))

    @property
    def paths(self) -> list[str]:
        """The files it changed, relative to the workspace."""
        return [c["path"] for c in self.meta.get("changed", [])]

    @property
    def workspace(self) -> str:
        """The workspace folder it changed."""
        return str(self.meta.get("workspace", ""))

    def summary(self) -> dict[str, Any]:
        """The record as JSON for people and clients."""
        keys = ("kind", "call_id", "tool", "run_id", "step", "changed", "undoes")
        return {"id": self.id, **{k: self.meta.get(k) for k in keys}, "at": self.meta.get("at")}


async def save_change(git: ShadowGit, thread_id: str, commit: str) -> str:
    """Point a new ref of `thread_id` at `commit`; the record's id."""
    record_id = f"{time.time_ns():020d}"
    await git.run("update-ref", f"{REF_ROOT}/{thread_key(thread_id)}/{record_id}", commit)
    return record_id


async def list_changes(git: ShadowGit, thread_id: str) -> list[Change]:
    """Every change recorded for `thread_id`, oldest first."""
    out = await git.run(
        "for-each-ref",
        "--sort=refname",
        "--format=%(refname)%00%(objectname)%00%(parent)%00%(contents)%01",
        f"{REF_ROOT}/{thread_key(thread_id)}/",
    )
    changes = []
    for item in out.decode().split("\x01"):
        fields = item.lstrip("\n").split("\0")
        if len(fields) != 4:
            continue
        ref, commit, parent, message = fields
        changes.append(Change(ref.rsplit("/", 1)[-1], commit, parent, json.loads(message)))
    return changes


async def message_of(git: ShadowGit, commit: str) -> dict[str, Any]:
    """The JSON a snapshot's commit carries (its `modes` at least)."""
    out = await git.run("show", "-s", "--format=%B", commit)
    loaded: dict[str, Any] = json.loads(out.decode())
    return loaded


async def changed_between(git: ShadowGit, old: str, new: str) -> dict[str, str]:
    """What differs between two snapshots' trees: path -> `added` / `modified` / `deleted`.

    Files and links by content and kind; a folder when it came or went with nothing
    below it changed (`mkdir -p a/b` is `a/b`, added). Modes only the commit message
    holds are not compared here (`Change` records carry them).
    """
    raw = await _raw_diff(git, old, new)
    found: dict[str, str] = {}
    folders: dict[str, str] = {}
    names = {"A": "added", "D": "deleted"}
    for path, old_mode, new_mode, status in raw:
        if old_mode in (DIR_MODE, NONE_MODE) and new_mode in (DIR_MODE, NONE_MODE):
            if status in names:  # a folder's own entry; `M` only says what is below changed
                folders[path] = names[status]
            continue
        found[path] = names.get(status, "modified")
    below = _with_changes_below(set(found) | set(folders))
    for path, change in folders.items():
        if path not in below:  # a file that became an empty folder: modified
            found[path] = "modified" if path in found else change
    return found


def _with_changes_below(paths: set[str]) -> set[str]:
    """Those of `paths` with another of them below: linear in the paths, not their depth.

    With `/` read as the lowest character, everything below a folder sorts right after it.
    """
    keys = sorted(p.replace("/", "\0") for p in paths)
    return {
        key.replace("\0", "/")
        for key, following in itertools.pairwise(keys)
        if following.startswith(key + "\0")
    }


async def came_or_went(git: ShadowGit, old: str, new: str) -> set[str]:
    """Every path, folders too, that exists in one of two trees and not the other."""
    raw = await _raw_diff(git, old, new)
    return {path for path, _, _, status in raw if status in ("A", "D")}


async def _raw_diff(git: ShadowGit, old: str, new: str) -> list[tuple[str, str, str, str]]:
    """`(path, old mode, new mode, status)` of every differing entry, trees included.

    A path that changed kind (a file that became a folder) comes twice: gone, then added.
    """
    out = await git.run("diff-tree", "-r", "-t", "-z", "--no-renames", "--raw", old, new)
    fields = out.split(b"\0")
    found = []
    for at in range(0, len(fields) - 1, 2):
        info = fields[at].decode().lstrip(":").split(" ")
        found.append((os.fsdecode(fields[at + 1]), info[0], info[1], info[4][:1]))
    return found


async def entries(git: ShadowGit, commit: str, paths: list[str]) -> dict[str, tuple[str, str]]:
    """`path -> (git mode, object id)` for those of `paths` present in `commit`.

    A folder is listed as itself (mode `040000`), not by what it holds.
    """
    if not paths:
        return {}
    if len(paths) > MANY_PATHS:  # too many for one command line: list all and pick
        wanted = set(paths)
        listed = await _ls_tree(git, commit, ["-r", "-t"])
        return {p: e for p, e in listed.items() if p in wanted}
    return await _ls_tree(git, commit, ["--", *paths])


async def _ls_tree(git: ShadowGit, commit: str, args: list[str]) -> dict[str, tuple[str, str]]:
    out = await git.run("ls-tree", "-z", "--full-tree", commit, *args)
    found = {}
    for line in out.split(b"\0"):
        if not line:
            continue
        info, path = line.split(b"\t", 1)
        mode, _, oid = info.decode().split(" ")
        found[os.fsdecode(path)] = (mode, oid)
    return found


async def read_blobs(git: ShadowGit, blobs: list[str]) -> dict[str, bytes]:
    """The contents of `blobs`, read in one `git cat-file --batch`."""
    if not blobs:
        return {}
    out = await git.run("cat-file", "--batch", stdin="".join(b + "\n" for b in blobs).encode())
    found: dict[str, bytes] = {}
    at = 0
    for blob in blobs:
        header_end = out.index(b"\n", at)
        _, _, size = out[at:header_end].decode().split(" ")
        start = header_end + 1
        found[blob] = out[start : start + int(size)]
        at = start + int(size) + 1
    return found


async def diff_text(git: ShadowGit, old: str, new: str, paths: list[str]) -> str:
    """A unified diff from `old` to `new` over `paths`, cut at about 200 kB.

    `paths` must leave out files whose content was not kept (git has no blob for them).
    """
    paths = paths[:MANY_PATHS]
    if not paths:
        return ""
    out = await git.run(
        "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--stat", "--patch",
        old, new, "--", *paths,
    )  # fmt: skip
    text = out.decode(errors="replace")
    if len(text) > DIFF_LIMIT:
        return text[:DIFF_LIMIT] + DIFF_CUT.format(n=len(text) - DIFF_LIMIT)
    return text
