"""Threads and thread states in the LangGraph server's shapes (`langgraph_api/state.py`)."""

from __future__ import annotations

import datetime
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.types import Interrupt, StateSnapshot

from ducklm.server.agent_protocol.common.inbox import with_inbox_keys
from ducklm.stores.agent_protocol.threads import ThreadRecord

ThreadStatus = Literal["idle", "busy", "interrupted", "error"]


def checkpoint_ref(config: RunnableConfig | None) -> dict[str, Any] | None:
    """`{"thread_id", "checkpoint_ns", "checkpoint_id"}` of a snapshot's config, if it has one."""
    configurable = (config or {}).get("configurable") or {}
    if not configurable.get("thread_id") or not configurable.get("checkpoint_id"):
        return None
    ref = {
        "checkpoint_id": configurable["checkpoint_id"],
        "thread_id": configurable["thread_id"],
        "checkpoint_ns": configurable.get("checkpoint_ns") or "",
    }
    if "checkpoint_map" in configurable:
        ref["checkpoint_map"] = configurable["checkpoint_map"]
    return ref


def interrupt_view(item: Interrupt) -> dict[str, Any]:
    """An interrupt as thread states show it: `{"id", "value"}` (+ `response_schema`)."""
    view: dict[str, Any] = {"id": item.id, "value": with_inbox_keys(item.value)}
    if getattr(item, "response_schema", None) is not None:
        view["response_schema"] = item.response_schema
    return view


def thread_state(snapshot: StateSnapshot) -> dict[str, Any]:
    """A `ThreadState`: values, next, tasks, checkpoints, interrupts."""
    config, parent = snapshot.config, snapshot.parent_config
    return {
        "values": snapshot.values,
        "next": list(snapshot.next),
        "tasks": [
            {
                "id": task.id,
                "name": task.name,
                "path": task.path,
                "error": task.error,
                "interrupts": [interrupt_view(i) for i in task.interrupts],
                "checkpoint": None,
                "state": None,
                "result": getattr(task, "result", None),
            }
            for task in snapshot.tasks
        ],
        "metadata": snapshot.metadata,
        "created_at": snapshot.created_at,
        "checkpoint": checkpoint_ref(config),
        "parent_checkpoint": checkpoint_ref(parent),
        "interrupts": [interrupt_view(i) for i in snapshot.interrupts],
        # Deprecated by the LangGraph server but still sent by it.
        "checkpoint_id": (config or {}).get("configurable", {}).get("checkpoint_id"),
        "parent_checkpoint_id": (parent or {}).get("configurable", {}).get("checkpoint_id"),
    }


def thread_status(snapshot: StateSnapshot, *, running: bool, failed: bool = False) -> ThreadStatus:
    """The thread's status, in the order the LangGraph server decides it.

    busy while a run holds it, error after a failed run, interrupted while the graph has
    steps left (a question, or a stop before a node), else idle.
    """
    if running:
        return "busy"
    if failed:
        return "error"
    return "interrupted" if snapshot.next else "idle"


def thread_view(
    record: ThreadRecord,
    snapshot: StateSnapshot,
    *,
    running: bool,
    failure: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A `Thread`: ids, times, metadata, status, current values and open interrupts.

    `failure` (`{"error", "message"}`): how the thread's last run failed, if it did.
    """
    return {
        "thread_id": record.thread_id,
        "created_at": iso_time(record.created_at),
        "updated_at": iso_time(record.updated_at),
        "state_updated_at": iso_time(record.updated_at),
        "metadata": record.metadata,
        "status": thread_status(snapshot, running=running, failed=failure is not None),
        "config": {},
        "values": snapshot.values or None,
        "interrupts": {
            task.id: [interrupt_view(i) for i in task.interrupts]
            for task in snapshot.tasks
            if task.interrupts
        },
        "error": failure,
    }


def iso_time(timestamp: float) -> str:
    """A Unix time as the ISO 8601 text the LangGraph server sends (UTC, with offset)."""
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).isoformat()
