"""Undo for every door: which changes to roll back, what that would do, and doing it.

`WorkspaceUndo.plan` picks the changes (the last turn's by default, or everything from
a tool call or a turn on), takes a snapshot of the workspace as it is now, and finds
files changed outside DuckLM since (a gap between records, or a difference from the
last record): those refuse the undo unless forced. `undo` restores the files the
changes touched to the state before the first of them (changed files go back, created
files go, deleted files return), records the undo as a change of its own (so it can be
undone too) and audits it.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ducklm.config.settings import Settings
from ducklm.stores.run_stores import RunStores
from ducklm.undo.errors import NothingToUndo, UndoError, UndoRefused
from ducklm.undo.git import ShadowGit
from ducklm.undo.records import (
    Change,
    changed_between,
    diff_text,
    entries,
    list_changes,
    message_of,
    read_blobs,
    save_change,
)
from ducklm.undo.restore import FileState, restore_files
from ducklm.undo.snapshot import Known, Limits, Snapshot, commit_snapshot, take_snapshot
from ducklm.undo.survey import default_mode

NO_CHANGES = "DuckLM has recorded no change of the workspace in conversation {thread}"
NO_CALL = "no recorded change of conversation {thread} comes from tool call {call}"
NO_TURN = "turn {turn} of conversation {thread} changed no file (it has {turns} turns)"
TWO_WORKSPACES = "those changes span several workspaces ({names}); undo them one turn at a time"
CHANGED_OUTSIDE = (
    "{n} file(s) changed outside DuckLM since its change: {names}. Undoing would lose "
    "that work; look at them first, or undo with --force"
)
UNDO_OFF = "undo is off: DUCK_UNDO_MAX_BYTES is 0, so DuckLM kept no workspace checkpoints"
RUNNING = "conversation {thread} is running; undo once it has stopped (or cancel it)"
GIT_LINK = "120000"


def open_undo(settings: Settings, stores: RunStores | None) -> WorkspaceUndo | None:
    """Undo over `<data dir>/undo`, or `None` when `DUCK_UNDO_MAX_BYTES` is 0."""
    if settings.undo_max_bytes == 0:
        return None
    limits = Limits(settings.undo_max_bytes, settings.undo_max_file_bytes)
    return WorkspaceUndo(settings.files.undo, limits, stores)


@dataclass(frozen=True)
class UndoPlan:
    """What an undo would do, before it does anything."""

    thread_id: str
    workspace: Path
    changes: list[Change]
    """The changes rolled back, oldest first."""
    paths: list[str]
    current: Snapshot
    restores: dict[str, str]
    """path -> what the undo does to it: `restored`, `removed` or `unchanged`."""
    outside: list[str]
    """Files changed outside DuckLM since; they refuse the undo unless forced."""
    diff: str

    def summary(self) -> dict[str, Any]:
        """The plan as JSON for people and clients."""
        return {
            "thread_id": self.thread_id,
            "workspace": str(self.workspace),
            "changes": [c.summary() for c in self.changes],
            "files": [{"path": p, "action": a} for p, a in sorted(self.restores.items())],
            "changed_outside": self.outside,
            "diff": self.diff,
        }


@dataclass(frozen=True)
class UndoResult:
    """A finished undo (or a dry run)."""

    plan: UndoPlan
    undo_id: str | None = None
    forced: bool = False
    dry_run: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The result as JSON for people and clients."""
        return {
            **self.plan.summary(),
            "undo_id": self.undo_id,
            "forced": self.forced,
            "dry_run": self.dry_run,
        }


class WorkspaceUndo:
    """Checkpoints and undo over the shadow repository in the data dir."""

    def __init__(self, root: Path, limits: Limits, stores: RunStores | None = None) -> None:
        self.git = ShadowGit(root)
        self.limits = limits
        self._stores = stores
        self._known: dict[Path, Known] = {}

    async def snapshot(
        self,
        workspace: Path,
        *,
        parent: str | None = None,
        force: tuple[str, ...] = (),
        meta: dict[str, Any] | None = None,
        commit: bool = True,
    ) -> Snapshot:
        """Record `workspace` as it is now (see `take_snapshot`)."""
        return await take_snapshot(
            self.git, workspace, self.limits, parent=parent, force=force, meta=meta,
            commit=commit, known=self._known,
        )  # fmt: skip

    async def record(self, thread_id: str, before: Snapshot, after: Snapshot) -> Change | None:
        """Keep `after` (taken with `commit=False`) as a change of `thread_id` after `before`.

        Returns:
            The change record, or `None` when nothing changed (nothing is kept).
        """
        changed = await _changes(self.git, before, after)
        if not changed:
            return None
        meta = {**after.meta, "changed": changed, "at": time.time()}
        commit = await commit_snapshot(self.git, after, before.commit, meta)
        record_id = await save_change(self.git, thread_id, commit)
        return Change(record_id, commit, before.commit, meta)

    async def changes(self, thread_id: str) -> list[Change]:
        """Every change recorded for `thread_id`, oldest first."""
        return await list_changes(self.git, thread_id)

    async def plan(
        self, thread_id: str, *, to_call: str | None = None, turn: int | None = None
    ) -> UndoPlan:
        """What undoing would do; changes nothing in the workspace.

        Raises:
            NothingToUndo: No recorded change fits.
            UndoError: The changes span workspaces, or git failed.
        """
        every = await self.changes(thread_id)
        start = await self._start(thread_id, every, to_call, turn)
        chosen = every[start:]
        names = {c.workspace for c in chosen}
        if len(names) != 1:
            raise UndoError(TWO_WORKSPACES.format(names=", ".join(sorted(names))))
        workspace = Path(names.pop())
        paths = sorted({p for c in chosen for p in c.paths})
        current = await self.snapshot(workspace, force=tuple(paths))
        outside = await self._changed_outside(chosen, current, paths)
        restores = await changed_between(self.git, current.commit, chosen[0].before, paths)
        actions = {"added": "restored", "modified": "restored", "deleted": "removed"}
        plan_restores = {p: actions[restores[p]] if p in restores else "unchanged" for p in paths}
        diff = await diff_text(self.git, current.commit, chosen[0].before, paths)
        return UndoPlan(thread_id, workspace, chosen, paths, current, plan_restores, outside, diff)

    async def undo(
        self,
        thread_id: str,
        *,
        to_call: str | None = None,
        turn: int | None = None,
        force: bool = False,
        dry_run: bool = False,
    ) -> UndoResult:
        """Roll the chosen changes back (see the module docstring).

        Raises:
            NothingToUndo: No recorded change fits.
            UndoRefused: Files changed outside DuckLM since, and `force` is off.
            UndoError: git failed, or a file could not be restored.
        """
        await self._check_idle(thread_id)
        plan = await self.plan(thread_id, to_call=to_call, turn=turn)
        if plan.outside and not force and not dry_run:
            names = ", ".join(plan.outside[:10])
            raise UndoRefused(
                CHANGED_OUTSIDE.format(n=len(plan.outside), names=names), plan.outside
            )
        if dry_run:
            return UndoResult(plan, forced=force, dry_run=True)
        await self._restore(plan)
        meta = {
            "kind": "undo",
            "workspace": str(plan.workspace),
            "undoes": [c.id for c in plan.changes],
            "forced": force,
        }
        after = await self.snapshot(
            plan.workspace, force=tuple(plan.paths), meta=meta, commit=False
        )
        record = await self.record(thread_id, plan.current, after)
        result = UndoResult(plan, record.id if record else None, forced=force)
        await self._audit_undo(result)
        return result

    async def _check_idle(self, thread_id: str) -> None:
        if self._stores is None:
            return
        runs = await self._stores.runs.for_thread(thread_id)
        if any(r.status == "running" for r in runs):
            raise UndoError(RUNNING.format(thread=thread_id))

    async def _task_of_runs(self, thread_id: str) -> dict[str, str | None]:
        if self._stores is None:
            return {}
        return {r.run_id: r.task_id for r in await self._stores.runs.for_thread(thread_id)}

    async def _start(
        self, thread_id: str, every: list[Change], to_call: str | None, turn: int | None
    ) -> int:
        if not every:
            raise NothingToUndo(NO_CHANGES.format(thread=thread_id))
        if to_call is not None:
            for i, change in enumerate(every):
                if change.meta.get("call_id") == to_call:
                    return i
            raise NothingToUndo(NO_CALL.format(thread=thread_id, call=to_call))
        if turn is not None:
            return await self._turn_start(thread_id, every, turn)
        last = every[-1]
        if last.kind == "undo":
            return len(every) - 1  # undoing an undo puts its changes back
        # The last turn: every change since the last undo made by the last change's task.
        tasks = await self._task_of_runs(thread_id)
        turn_of = [tasks.get(str(c.meta.get("run_id")), c.meta.get("run_id")) for c in every]
        start = len(every) - 1
        while start > 0 and every[start - 1].kind != "undo" and turn_of[start - 1] == turn_of[-1]:
            start -= 1
        return start

    async def _turn_start(self, thread_id: str, every: list[Change], turn: int) -> int:
        listed = await self._stores.tasks.list(thread_id, limit=10_000) if self._stores else []
        tasks = list(reversed(listed))
        if 1 <= turn <= len(tasks):
            task_of = await self._task_of_runs(thread_id)
            wanted = tasks[turn - 1].task_id
            for i, change in enumerate(every):
                if task_of.get(str(change.meta.get("run_id"))) == wanted:
                    return i
        raise NothingToUndo(NO_TURN.format(turn=turn, thread=thread_id, turns=len(tasks)))

    async def _changed_outside(
        self, chosen: list[Change], current: Snapshot, paths: list[str]
    ) -> list[str]:
        found = set(await _differing(self.git, chosen[-1].commit, current, paths))
        for earlier, later in itertools.pairwise(chosen):
            if earlier.commit != later.before:
                found |= set(await changed_between(self.git, earlier.commit, later.before, paths))
        return sorted(found)

    async def _restore(self, plan: UndoPlan) -> None:
        before = plan.changes[0].before
        present = await entries(self.git, before, plan.paths)
        modes = (await message_of(self.git, before)).get("modes", {})
        blobs = await read_blobs(self.git, sorted({blob for _, blob in present.values()}))
        states = []
        for path in plan.paths:
            if path not in present:
                states.append(FileState(path, None))
                continue
            git_mode, blob = present[path]
            link = git_mode == GIT_LINK
            mode = modes.get(path) or (0o755 if git_mode == "100755" else 0o644)
            states.append(FileState(path, mode, blobs[blob], link=link))
        folders = await self.git.run("ls-tree", "-r", "-d", "-z", "--name-only", before)
        folders_before = {f for f in folders.decode().split("\0") if f}
        await asyncio.to_thread(restore_files, plan.workspace, states, folders_before)

    async def _audit_undo(self, result: UndoResult) -> None:
        if self._stores is None:
            return
        plan = result.plan
        event = {
            "type": "undo_applied",
            "thread_id": plan.thread_id,
            "undo_id": result.undo_id,
            "undoes": [c.id for c in plan.changes],
            "calls": [c.meta.get("call_id") for c in plan.changes],
            "files": [{"path": p, "action": a} for p, a in sorted(plan.restores.items())],
            "forced": result.forced,
            "changed_outside": plan.outside,
        }
        await self._stores.audit.append(plan.thread_id, None, event)


async def _changes(git: ShadowGit, before: Snapshot, after: Snapshot) -> list[dict[str, str]]:
    """What changed from `before` to `after`: content, presence, or the exact mode."""
    if before.tree == after.tree and before.modes == after.modes:
        return []  # the usual step: a read, or a write of what was there
    changed = await changed_between(git, before.tree, after.tree)
    for path in {*before.modes, *after.modes}:
        if path not in changed and before.modes.get(path) != after.modes.get(path):
            changed[path] = "modified"
    return [{"path": p, "change": changed[p]} for p in sorted(changed)]


async def _differing(git: ShadowGit, commit: str, current: Snapshot, paths: list[str]) -> list[str]:
    found = set(await changed_between(git, commit, current.commit, paths))
    recorded = (await message_of(git, commit)).get("modes", {})
    for path in paths:
        if recorded.get(path) != current.modes.get(path):
            found.add(path)
    return sorted(found)


__all__ = ["UndoPlan", "UndoResult", "WorkspaceUndo", "default_mode"]
