"""Change records: what one call (or one undo) changed, kept as refs in the shadow repo.

A record is a commit whose tree is the workspace after the change and whose parent is
the snapshot before it; its message is JSON (thread, run, task, step, tool call id,
the files changed). Its ref is `refs/undo/<thread digest>/<nanoseconds>`, so a thread's
records list in order, survive restarts, and are written the moment a change is made,
not behind the run like the audit.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from ducklm.undo.git import ShadowGit, thread_key

REF_ROOT = "refs/undo"
DIFF_LIMIT = 200_000
DIFF_CUT = "\n[... the diff goes on: {n} more bytes ...]\n"


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


async def changed_between(
    git: ShadowGit, old: str, new: str, paths: list[str] | None = None
) -> dict[str, str]:
    """Files that differ between two snapshots: path -> `added` / `modified` / `deleted`."""
    args = ["diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new]
    if paths is not None:
        if not paths:
            return {}
        args += ["--", *paths]
    fields = (await git.run(*args)).decode().split("\0")
    names = {"A": "added", "D": "deleted"}
    return {
        fields[i + 1]: names.get(fields[i][:1], "modified") for i in range(0, len(fields) - 1, 2)
    }


async def entries(git: ShadowGit, commit: str, paths: list[str]) -> dict[str, tuple[str, str]]:
    """`path -> (git mode, blob id)` for those of `paths` present in `commit`."""
    if not paths:
        return {}
    out = await git.run("ls-tree", "-r", "-z", commit, "--", *paths)
    found = {}
    for line in out.decode().split("\0"):
        if not line:
            continue
        info, path = line.split("\t", 1)
        mode, _, blob = info.split(" ")
        found[path] = (mode, blob)
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
    """A unified diff from `old` to `new` over `paths`, cut at about 200 kB."""
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
