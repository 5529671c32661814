"""The event vocabulary shared by the CLI, the library and the SSE server.

An event is a JSON-ready dict with a `type` from `EventType`. Nodes emit theirs with
`emit`: into the run's channel under DuckLM's runner (`ducklm.runtime.channel`), through
LangGraph's stream writer (`custom` mode) elsewhere (Studio, `langgraph dev`). The runner
adds `run_started`, `approval_requested`, `error` and `done` (a review run behind an
answered turn: `review_started`, then `review_finished`, `review_skipped` or
`review_deferred`, after which it starts again), stamps
`thread_id`, `task_id`, `run_id` and a per-thread `seq`, and appends every event except
`token` and `reasoning` to the audit table.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal, get_args

if TYPE_CHECKING:  # a type only: the operator commands read events without LangGraph
    from langgraph.runtime import Runtime

EventType = Literal[
    "run_started",
    "message_sent",
    "route_decided",
    "plan_created",
    "plan_step_started",
    "plan_step_finished",
    "plan_revised",
    "code_proposed",
    "action_decided",
    "token",
    "answer_cut",
    "context_cut",
    "context_shrunk",
    "model_usage",
    "answer_facts",
    "reasoning",
    "tool_call_started",
    "tool_progress",
    "tool_call_finished",
    "workspace_checkpoint",
    "undo_applied",
    "conversation_untrusted",
    "approval_requested",
    "password_requested",
    "elicitation_requested",
    "mcp_sampled",
    "memory_policy_decision",
    "memory_stored",
    "memory_policy_failed",
    "reflection_completed",
    "review_started",
    "review_finished",
    "review_skipped",
    "review_deferred",
    "recall_skipped",
    "server_capability",
    "model_restarting",
    "model_restarted",
    "error",
    "done",
]
EVENT_TYPES: frozenset[str] = frozenset(get_args(EventType))
RunStatus = Literal["completed", "interrupted", "failed", "cancelled"]
QUESTION_EVENTS: frozenset[EventType] = frozenset(
    {"approval_requested", "password_requested", "elicitation_requested"}
)
"""The events that put a paused run's question to the person (`runner.question_event`)."""

# Token-level events are the answer itself, which the checkpoint already holds: auditing
# each one would write a row per token. A call's progress is live only: its outcome is
# in `tool_call_finished`, and a server may report progress many times a second.
UNAUDITED: frozenset[str] = frozenset({"token", "reasoning", "tool_progress"})

Event = dict[str, Any]


def event(type_: EventType, **data: Any) -> Event:
    """Build an event of `type_` with `data` as its fields."""
    return {"type": type_, **data}


def done_fields(status: RunStatus, answer: str = "", **fields: Any) -> dict[str, Any]:
    """The fields of `done`, the last event of every run: how it ended and its answer.

    Built here alone: a run's end (`ducklm.runtime.runner`), a run marked interrupted by
    recovery, an abandoned task and a task that failed outside its run all close with it.
    """
    return {"status": status, "answer": answer, **fields}


def emit(runtime: Runtime[Any], type_: EventType, **data: Any) -> None:
    """Send an event from inside a node to whoever streams the run."""
    sink = getattr(runtime.context, "events", None)
    (sink or runtime.stream_writer)(event(type_, **data))


class TokenSender:
    """Sends a model's answer as `token` events, one stream each; the first goes out at once.

    Chunks that arrive together (a fast server, or several in one read) are parsed with
    no pause between them, and a token reaches a person only when the loop has run the
    run's reader and then the clients that follow it (two tasks: the runner's driver,
    then each SSE stream). So the first token is followed by two turns of the loop,
    which take it to the clients before the rest is parsed: without them it waited for
    the last chunk, 3-4 ms of a short reply's first token at the scripted server
    (scripts/bench/server_latency.py). Later tokens go on when the node next waits for
    the network, in batches: a turn after each one cost the server a sixth to a quarter
    of its token rate in a burst (A/B, same run), and a model slower than the server gets
    them one by one anyway.
    """

    def __init__(self, runtime: Runtime[Any]) -> None:
        self._runtime = runtime
        self._first = True

    async def send(self, text: str) -> None:
        """Emit `text` as a `token` event; the stream's first is handed on before this returns."""
        emit(self._runtime, "token", text=text)
        if self._first:
            self._first = False
            await asyncio.sleep(0)  # the run's reader takes it
            await asyncio.sleep(0)  # and the clients that follow the run send it
