"""Runs in the LangGraph server's shape (`Run`): the door's row joined with DuckLM's run.

A run started by another door (`/v1`, the web chat, the CLI) on the same thread has no
door row: it is shown with the one assistant and empty metadata, so a LangGraph client
sees every turn of the conversation.
"""

from __future__ import annotations

from typing import Any, Literal

from ducklm.server.agent_protocol.common.identity import ASSISTANT_ID
from ducklm.server.agent_protocol.common.views import iso_time
from ducklm.stores.agent_protocol.runs import RunRow
from ducklm.stores.runs import RunRecord

RunStatus = Literal["pending", "running", "error", "success", "timeout", "interrupted"]

BY_DUCK_STATUS: dict[str, RunStatus] = {
    "running": "running",
    "deferred": "running",
    "completed": "success",
    # Stopped at a question: LangGraph's worker ends a run at `interrupt()` as a
    # success (the thread is `interrupted`). A run stopped by a restart has an error.
    "interrupted": "success",
    # What LangGraph's cancel (`action=interrupt`) leaves.
    "cancelled": "interrupted",
    "failed": "error",
}
BY_DOOR_STATE: dict[str, RunStatus] = {
    "pending": "pending",
    "refused": "error",
    "cancelled": "interrupted",
}


def run_status(row: RunRow | None, record: RunRecord | None) -> RunStatus:
    """The LangGraph status of a run from what the door and DuckLM recorded."""
    if row is not None and row.state in BY_DOOR_STATE:
        return BY_DOOR_STATE[row.state]
    if record is None:
        return "pending"  # started, its first record not written yet
    if record.status == "interrupted" and record.error:
        return "error"  # its process died (`ducklm.runtime.recovery`)
    return BY_DUCK_STATUS.get(record.status, "error")


def run_view(row: RunRow | None, record: RunRecord | None) -> dict[str, Any]:
    """A `Run`: ids, times, status, metadata, the request (`kwargs`), the strategy."""
    if row is None:
        assert record is not None  # a run is known from one or the other
        row = _foreign(record)
    ended = (record.finished_at or record.started_at) if record is not None else 0.0
    return {
        "run_id": row.run_id,
        "thread_id": row.thread_id,
        "assistant_id": row.assistant_id,
        "created_at": iso_time(row.created_at),
        "updated_at": iso_time(max(row.created_at, row.updated_at, ended)),
        "status": run_status(row, record),
        "metadata": row.metadata,
        "kwargs": row.kwargs,
        "multitask_strategy": row.multitask_strategy,
    }


def _foreign(record: RunRecord) -> RunRow:
    """The row of a run another door started (it has none of its own)."""
    return RunRow(
        record.run_id,
        record.thread_id,
        record.run_id,
        ASSISTANT_ID,
        record.started_at,
        record.started_at,
        "started",
        {},
        {},
        "reject",
    )
