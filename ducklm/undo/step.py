"""The checkpoint of one tool step, as the tool node takes it.

Before the first call of the step that may change the workspace (every shell command,
whatever its class: `tools/policy.py:may_change_workspace`), the workspace is
recorded (`workspace_checkpoint` event); after each such call, what it changed becomes
a change record, named in its `tool_call_finished` event (`changed_files`, `undo_id`).
Only the tool node's last pass gets here, after every question has been answered, so
a checkpoint is never taken for a call that then waits for a person.

A checkpoint that cannot be taken (git missing) never stops the step: the event says
so, and those calls cannot be undone. A change whose earlier content was too large or
too slow to keep is still recorded; its `tool_call_finished` says plainly which part
cannot be undone (`undo_warning`). A call stopped by Stop is recorded too
(`run.py:execute`).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from ducklm.kit.events import emit
from ducklm.undo.errors import UndoError
from ducklm.undo.service import WorkspaceUndo
from ducklm.undo.snapshot import Snapshot

log = logging.getLogger(__name__)

SHOWN_CHANGES = 200
NOT_RECORDED = "DuckLM could not record what this call changed: {why}"
NOT_KEPT = (
    "{kept} change(s) recorded, the rest ({n}) could not be: the earlier content of "
    "{names} was not kept ({why}), so undo cannot put it back"
)


class StepCheckpoint:
    """The checkpoint of one step and the change records of its calls."""

    def __init__(
        self, undo: WorkspaceUndo | None, runtime: Runtime[Any], workspace: Path, step: int
    ) -> None:
        self._undo = undo
        self._runtime = runtime
        self._workspace = workspace
        self._step = step
        self._before: Snapshot | None = None
        self._failed = undo is None

    async def before_call(self, call_id: str, args: dict[str, Any]) -> None:
        """Take the step's checkpoint if this is its first call that may change files."""
        if self._failed or self._before is not None:
            return
        assert self._undo is not None  # `_failed` is set without one
        started = time.perf_counter()
        try:
            self._before = await self._undo.snapshot(self._workspace)
        except UndoError as exc:
            self._failed = True
            emit(self._runtime, "workspace_checkpoint", call_id=call_id, step=self._step,
                 status="skipped", reason=str(exc))  # fmt: skip
            return
        snap = self._before
        emit(
            self._runtime,
            "workspace_checkpoint",
            call_id=call_id,
            step=self._step,
            status="taken",
            checkpoint=snap.commit,
            files=snap.files,
            bytes=snap.size,
            left_out=list(snap.left_out)[:SHOWN_CHANGES],
            duration_ms=round((time.perf_counter() - started) * 1000, 2),
        )

    async def after_call(self, call_id: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Record what the call changed; the facts its `tool_call_finished` carries."""
        if self._before is None or self._undo is None:
            return {}
        info = self._runtime.execution_info
        thread_id = (info.thread_id if info else None) or ""
        meta = {
            "kind": "call",
            "thread_id": thread_id,
            "run_id": info.run_id if info else None,
            "step": self._step,
            "call_id": call_id,
            "tool": tool,
            "workspace": str(self._workspace),
        }
        try:
            after = await self._undo.snapshot(self._workspace, meta=meta, commit=False)
            change = await self._undo.record(thread_id, self._before, after)
        except UndoError as exc:
            log.warning("change of call %s not recorded: %s", call_id, exc)
            return {"undo_error": NOT_RECORDED.format(why=exc)}
        if change is None:
            return {}
        before = self._before
        self._before = Snapshot(
            change.commit, after.tree, after.modes, after.files, after.size, after.left_out
        )
        changed = change.meta["changed"]
        # The record keeps them all; the event (and the audit row) the first ones.
        facts: dict[str, Any] = {
            "changed_files": changed[:SHOWN_CHANGES],
            "changed_count": len(changed),
            "undo_id": change.id,
        }
        if not_kept := change.meta["not_kept"]:
            whys = sorted({before.left_out[p] for p in not_kept})
            facts["undo_warning"] = NOT_KEPT.format(
                kept=len(changed) - len(not_kept), n=len(not_kept),
                names=", ".join(not_kept[:5]) + (" ..." if len(not_kept) > 5 else ""),
                why="; ".join(whys),
            )  # fmt: skip
        return facts
