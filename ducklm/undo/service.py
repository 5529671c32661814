"""Undo for every door: which changes to roll back, what that would do, and doing it.

`WorkspaceUndo.plan` picks the changes: one tool call's (`to_call`), one turn's (`turn`,
or `turn_of` a call), or by default the last turn's (or, right after an undo, that
undo: undoing it redoes). Only those: a revert never rolls back a change made after
them. It takes a snapshot of the workspace as it is now and compares each path those
changes touched with what their last record left there: a path a later recorded change
touched again stands in the way (named: which call or upload), one changed since with
no record was changed outside DuckLM; either refuses the undo unless forced. `undo`
puts each touched path back as it was before the first of the chosen changes (changed
files go back, created files and folders go, deleted ones return, modes exact), records
the undo as a change of its own (so it can be undone too) and audits it. A change
reverted by an undo reads as reverted (`reverted_by`) in every door, after a restart too.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ducklm.config.settings import Settings
from ducklm.stores.run_stores import RunStores
from ducklm.undo.choice import last_turn, later_changes, refusal, reverted_by
from ducklm.undo.errors import NothingToUndo, UndoError
from ducklm.undo.git import ShadowGit
from ducklm.undo.records import (
    Change,
    came_or_went,
    changed_between,
    diff_text,
    entries,
    list_changes,
    message_of,
    read_blobs,
    save_change,
)
from ducklm.undo.restore import EntryState, Kind, restore_entries
from ducklm.undo.snapshot import Known, Limits, Snapshot, commit_snapshot, take_snapshot
from ducklm.undo.survey import default_mode

NO_CHANGES = "DuckLM has recorded no change of the workspace in conversation {thread}"
NO_CALL = "no recorded change of conversation {thread} comes from tool call {call}"
NO_TURN = "turn {turn} of conversation {thread} changed no file (it has {turns} turns)"
ALREADY = "{what} was reverted already (undo {undo}); undo that revert to put it back"
TWO_WORKSPACES = "those changes span several workspaces ({names}); undo them one turn at a time"
UNDO_OFF = "undo is off: DUCK_UNDO_MAX_BYTES is 0, so DuckLM kept no workspace checkpoints"
RUNNING = "conversation {thread} is running; undo once it has stopped (or cancel it)"
DIR, LINK = "040000", "120000"
SHOWN_PATHS = 200
State = tuple[Kind, int, str]
"""What stands at a path: kind (`file` / `link` / `dir`), exact mode, content id."""


def open_undo(settings: Settings, stores: RunStores | None) -> WorkspaceUndo | None:
    """Undo over `<data dir>/undo`, or `None` when `DUCK_UNDO_MAX_BYTES` is 0."""
    if settings.undo_max_bytes == 0:
        return None
    limits = Limits(
        settings.undo_max_bytes, settings.undo_max_file_bytes, settings.undo_max_seconds
    )
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
    """Paths changed outside DuckLM since; they refuse the undo unless forced."""
    diff: str
    later: list[dict[str, Any]] = field(default_factory=list)
    """Later changes that touched these paths again (`id`, `call_id`, `tool`, `paths`)."""
    lost: list[str] = field(default_factory=list)
    """Paths whose earlier content was not kept (too large, too slow): left as they are."""
    befores: dict[str, str] = field(default_factory=dict)
    """path -> the commit it is restored from (before the first chosen change of it)."""

    def summary(self) -> dict[str, Any]:
        """The plan as JSON for people and clients."""
        return {
            "thread_id": self.thread_id,
            "workspace": str(self.workspace),
            "changes": [c.summary() for c in self.changes],
            "files": [{"path": p, "action": a} for p, a in sorted(self.restores.items())],
            "changed_outside": self.outside,
            "changed_later": self.later,
            "cannot_restore": self.lost,
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
        meta: dict[str, Any] | None = None,
        commit: bool = True,
    ) -> Snapshot:
        """Record `workspace` as it is now (see `take_snapshot`)."""
        return await take_snapshot(
            self.git, workspace, self.limits, parent=parent, meta=meta, commit=commit,
            known=self._known,
        )  # fmt: skip

    async def record(self, thread_id: str, before: Snapshot, after: Snapshot) -> Change | None:
        """Keep `after` (taken with `commit=False`) as a change of `thread_id` after `before`.

        The record names what changed, and `not_kept`: the changed paths whose earlier
        content `before` could not keep (that part of the change cannot be undone).

        Returns:
            The change record, or `None` when nothing changed (nothing is kept).
        """
        changed = await _changes(self.git, before, after)
        if not changed:
            return None
        not_kept = [c["path"] for c in changed if c["path"] in before.left_out]
        meta = {**after.meta, "changed": changed, "not_kept": not_kept, "at": time.time()}
        commit = await commit_snapshot(self.git, after, before.commit, meta)
        record_id = await save_change(self.git, thread_id, commit)
        return Change(record_id, commit, before.commit, meta)

    async def changes(self, thread_id: str) -> list[Change]:
        """Every change recorded for `thread_id`, oldest first."""
        return await list_changes(self.git, thread_id)

    async def history(self, thread_id: str) -> list[dict[str, Any]]:
        """Every change of `thread_id` as JSON, oldest first, each with `reverted_by`.

        Each names its first `SHOWN_PATHS` paths (`changed`) and how many (`changed_count`).
        """
        every = await self.changes(thread_id)
        reverted = reverted_by(every)
        return [
            {
                **c.summary(),
                "changed": c.meta.get("changed", [])[:SHOWN_PATHS],
                "changed_count": len(c.paths),
                "reverted_by": reverted.get(c.id),
            }
            for c in every
        ]

    async def plan(
        self,
        thread_id: str,
        *,
        to_call: str | None = None,
        turn: int | None = None,
        turn_of: str | None = None,
    ) -> UndoPlan:
        """What undoing would do; changes nothing in the workspace.

        Raises:
            NothingToUndo: No recorded change fits.
            UndoError: They were reverted already, span workspaces, or git failed.
        """
        every = await self.changes(thread_id)
        chosen = await self._choose(thread_id, every, to_call, turn, turn_of)
        names = {c.workspace for c in chosen}
        if len(names) != 1:
            raise UndoError(TWO_WORKSPACES.format(names=", ".join(sorted(names))))
        workspace = Path(names.pop())
        first: dict[str, Change] = {}
        last: dict[str, Change] = {}
        for change in chosen:
            for path in change.paths:
                first.setdefault(path, change)
                last[path] = change
        paths = sorted(first)
        current = await self.snapshot(workspace)
        want = await self._states({p: c.before for p, c in first.items()})
        left = await self._states({p: c.commit for p, c in last.items()})
        now = await self._states({p: current.commit for p in paths})
        moved = [p for p in paths if now.get(p) != left.get(p)]
        later = later_changes(every, chosen, moved)
        in_way = {p for item in later for p in item["paths"]}
        lost = await self._lost({p: c.before for p, c in first.items()}, want)
        restores = {
            p: "unchanged" if now.get(p) == want.get(p) or p in lost
            else "removed" if p not in want else "restored"
            for p in paths
        }  # fmt: skip
        shown = [p for p in paths if p not in lost and p not in current.left_out]
        diff = await diff_text(self.git, current.commit, chosen[0].before, shown)
        outside = [p for p in moved if p not in in_way]
        befores = {p: c.before for p, c in first.items()}
        return UndoPlan(
            thread_id, workspace, chosen, paths, current, restores, outside, diff, later, lost,
            befores,
        )  # fmt: skip

    async def undo(
        self,
        thread_id: str,
        *,
        to_call: str | None = None,
        turn: int | None = None,
        turn_of: str | None = None,
        force: bool = False,
        dry_run: bool = False,
    ) -> UndoResult:
        """Roll the chosen changes back (see the module docstring).

        Raises:
            NothingToUndo: No recorded change fits.
            UndoRefused: A later change or one made outside DuckLM touched the same
                paths since, and `force` is off.
            UndoError: git failed, or a file could not be restored.
        """
        await self._check_idle(thread_id)
        plan = await self.plan(thread_id, to_call=to_call, turn=turn, turn_of=turn_of)
        if (plan.outside or plan.later) and not force and not dry_run:
            raise refusal(plan)
        if dry_run:
            return UndoResult(plan, forced=force, dry_run=True)
        await self._restore(plan)
        meta = {
            "kind": "undo",
            "workspace": str(plan.workspace),
            "undoes": [c.id for c in plan.changes],
            "forced": force,
        }
        after = await self.snapshot(plan.workspace, meta=meta, commit=False)
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

    async def _choose(
        self,
        thread_id: str,
        every: list[Change],
        to_call: str | None,
        turn: int | None,
        turn_of: str | None,
    ) -> list[Change]:
        """The changes a request names, less those reverted already."""
        if not every:
            raise NothingToUndo(NO_CHANGES.format(thread=thread_id))
        tasks = await self._task_of_runs(thread_id)
        task_of = {c.id: tasks.get(str(c.meta.get("run_id")), c.meta.get("run_id")) for c in every}
        if to_call is not None or turn_of is not None:
            call = to_call or turn_of
            of_call = [c for c in every if c.meta.get("call_id") == call]
            if not of_call:
                raise NothingToUndo(NO_CALL.format(thread=thread_id, call=call))
            picked = of_call
            if turn_of is not None:
                picked = [c for c in every if task_of[c.id] == task_of[of_call[0].id]]
            what = f"tool call {call}" if to_call else f"the turn of tool call {call}"
        elif turn is not None:
            picked = await self._turn(thread_id, every, task_of, turn)
            what = f"turn {turn}"
        else:
            picked, what = last_turn(every, task_of), "the last turn"
        reverted = reverted_by(every)
        live = [c for c in picked if c.id not in reverted]
        if not live:
            raise UndoError(ALREADY.format(what=what, undo=reverted[picked[-1].id]))
        return live

    async def _turn(
        self, thread_id: str, every: list[Change], task_of: dict[str, Any], turn: int
    ) -> list[Change]:
        listed = await self._stores.tasks.list(thread_id, limit=10_000) if self._stores else []
        tasks = list(reversed(listed))
        if 1 <= turn <= len(tasks):
            picked = [c for c in every if task_of[c.id] == tasks[turn - 1].task_id]
            if picked:
                return picked
        raise NothingToUndo(NO_TURN.format(turn=turn, thread=thread_id, turns=len(tasks)))

    async def _states(self, commits: dict[str, str]) -> dict[str, State]:
        """What stood at each path in the commit given for it (absent paths left out)."""
        by_commit: dict[str, list[str]] = {}
        for path, commit in commits.items():
            by_commit.setdefault(commit, []).append(path)
        found: dict[str, State] = {}
        for commit, paths in by_commit.items():
            present = await entries(self.git, commit, paths)
            modes = (await message_of(self.git, commit)).get("modes", {})
            for path, (git_mode, oid) in present.items():
                found[path] = _state(path, git_mode, oid, modes)
        return found

    async def _lost(self, commits: dict[str, str], want: dict[str, State]) -> list[str]:
        """Paths whose content in the commit restored from was not kept."""
        lost = []
        for commit in set(commits.values()):
            left_out = (await message_of(self.git, commit)).get("left_out", {})
            lost += [p for p, c in commits.items() if c == commit and p in want and p in left_out]
        return sorted(lost)

    async def _restore(self, plan: UndoPlan) -> None:
        todo = [p for p, a in plan.restores.items() if a != "unchanged"]
        want = await self._states({p: plan.befores[p] for p in todo})
        blobs = await read_blobs(
            self.git, sorted({want[p][2] for p in todo if p in want and want[p][0] != "dir"})
        )
        states = []
        for path in todo:
            if path not in want:
                states.append(EntryState(path, "absent"))
                continue
            kind, mode, oid = want[path]
            states.append(EntryState(path, kind, mode, blobs.get(oid, b"")))
        before = plan.changes[0].before
        listed = await self.git.run("ls-tree", "-r", "-d", "-z", "--name-only", before)
        modes = (await message_of(self.git, before)).get("modes", {})
        names = [os.fsdecode(f) for f in listed.split(b"\0") if f]
        folders = {f: modes.get(f, 0o755) for f in names}
        await asyncio.to_thread(restore_entries, plan.workspace, states, folders)

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
            "changed_later": plan.later,
            "cannot_restore": plan.lost,
        }
        await self._stores.audit.append(plan.thread_id, None, event)


def _state(path: str, git_mode: str, oid: str, modes: dict[str, int]) -> State:
    if git_mode == DIR:
        return ("dir", modes.get(path, 0o755), "")
    if git_mode == LINK:
        return ("link", 0, oid)
    return ("file", modes.get(path) or (0o755 if git_mode == "100755" else 0o644), oid)


async def _changes(git: ShadowGit, before: Snapshot, after: Snapshot) -> list[dict[str, str]]:
    """What changed from `before` to `after`: content, presence, kind or the exact mode."""
    if before.tree == after.tree and before.modes == after.modes:
        return []  # the usual step: a read, or a write of what was there
    changed = {}
    if before.tree != after.tree:
        changed = await changed_between(git, before.tree, after.tree)
    modes = {
        p for p in {*before.modes, *after.modes}
        if p not in changed and before.modes.get(p) != after.modes.get(p)
    }  # fmt: skip
    if modes and before.tree != after.tree:
        modes -= await came_or_went(git, before.tree, after.tree)  # said by its presence
    changed |= dict.fromkeys(modes, "modified")
    return [{"path": p, "change": changed[p]} for p in sorted(changed)]


__all__ = ["UndoPlan", "UndoResult", "WorkspaceUndo", "default_mode"]
