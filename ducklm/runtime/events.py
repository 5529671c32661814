"""The event vocabulary shared by the CLI, the library and the SSE server.

An event is a JSON-ready dict with a `type` from `EventType`. Nodes emit theirs with
`emit`: into the run's channel under DuckLM's runner (`ducklm.runtime.channel`), through
LangGraph's stream writer (`custom` mode) elsewhere (Studio, `langgraph dev`). The runner
adds `run_started`, `approval_requested`, `error` and `done` (a review run behind an
answered turn: `review_started`, then `review_finished` or `review_skipped`), stamps
`thread_id`, `task_id`, `run_id` and a per-thread `seq`, and appends every event except
`token` and `reasoning` to the audit table.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal, get_args

from langgraph.runtime import Runtime

EventType = Literal[
    "run_started",
    "route_decided",
    "plan_created",
    "plan_step_started",
    "plan_step_finished",
    "plan_revised",
    "code_proposed",
    "action_decided",
    "token",
    "reasoning",
    "tool_call_started",
    "tool_call_finished",
    "workspace_checkpoint",
    "undo_applied",
    "conversation_untrusted",
    "approval_requested",
    "password_requested",
    "memory_policy_decision",
    "memory_stored",
    "memory_policy_failed",
    "reflection_completed",
    "review_started",
    "review_finished",
    "review_skipped",
    "error",
    "done",
]
EVENT_TYPES: frozenset[str] = frozenset(get_args(EventType))
RunStatus = Literal["completed", "interrupted", "failed", "cancelled"]

# Token-level events are the answer itself, which the checkpoint already holds: auditing
# each one would write a row per token.
UNAUDITED: frozenset[str] = frozenset({"token", "reasoning"})

Event = dict[str, Any]


def event(type_: EventType, **data: Any) -> Event:
    """Build an event of `type_` with `data` as its fields."""
    return {"type": type_, **data}


def emit(runtime: Runtime[Any], type_: EventType, **data: Any) -> None:
    """Send an event from inside a node to whoever streams the run."""
    sink = getattr(runtime.context, "events", None)
    (sink or runtime.stream_writer)(event(type_, **data))


async def emit_token(runtime: Runtime[Any], text: str) -> None:
    """Send a `token` of the answer, and let it go out before the node reads on.

    A model server's chunks often arrive together (a fast server, or several in one
    read). The node would parse every one of them before the loop ran the run's reader,
    so the first token waited for the last chunk to be parsed: 3-4 ms of the first token
    for a short reply (scripts/bench/server_latency.py). One turn of the loop per token
    hands each on as it comes.
    """
    emit(runtime, "token", text=text)
    await asyncio.sleep(0)
