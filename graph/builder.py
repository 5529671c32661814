"""Builds the cognitive cycle.

    START -> context -> [planner] -> action -(tool calls)-> tool -> action ...
                        action -(no calls)-> thinker -> [critic] -> [memory_policy] -> END
                        action -(its reply is the answer)-> [critic] -> ...

    (`context` routes the turn, prepares it and recalls memories: `nodes/turn_start.py`.)

The builder is returned uncompiled: whoever opens a checkpointer compiles it (the
library facade, the CLI, the server, tests); `langgraph.json` gets it compiled without
one, since the LangGraph server brings its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, TypeVar

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy

from ducklm.graph.context import DuckContext, RunSwitches
from ducklm.graph.routing import (
    route_after_action,
    route_after_answer,
    route_after_context,
    route_after_critic,
    route_after_step,
    route_after_tool,
)
from ducklm.graph.state import DuckState, InputState
from ducklm.models.errors import is_retryable
from ducklm.nodes import action_json
from ducklm.nodes.action import decide_action
from ducklm.nodes.coder import propose_code
from ducklm.nodes.critic import reflect_on_turn
from ducklm.nodes.memory_policy import decide_memory
from ducklm.nodes.planner import write_plan
from ducklm.nodes.step_review import review_step
from ducklm.nodes.thinker import NOTES_HEADER, STEP_LIMIT_NOTE, write_answer
from ducklm.nodes.tool import run_tools
from ducklm.nodes.turn_start import start_turn
from ducklm.turn.answers.guard import answer_directly, checked_answer

Node = Callable[[DuckState, Runtime[DuckContext]], Awaitable[dict[str, Any]]]
DuckGraph = CompiledStateGraph[DuckState, DuckContext, InputState, DuckState]
ReviewGraph = CompiledStateGraph[DuckState, DuckContext, DuckState, DuckState]
"""`build_review_graph` compiled: its input is a whole state."""
R = TypeVar("R")
SCAFFOLD_TEMPLATES = (
    STEP_LIMIT_NOTE,
    NOTES_HEADER,
    action_json.JSON_MODE_INSTRUCTIONS,
    action_json.REPAIR_REQUEST,
    action_json.GAVE_UP_NOTE,
    action_json.NO_ARGUMENTS_NOTE,
)
"""The nodes' own prompt text, which no answer may repeat (`ducklm.turn.answers`)."""


def build_graph(
    *,
    default_context: DuckContext | None = None,
    retry_attempts: int = 3,
    retry_initial_interval: float = 0.5,
) -> StateGraph[DuckState, DuckContext, InputState, DuckState]:
    """The cognitive cycle as an uncompiled `StateGraph`.

    Args:
        default_context: For graphs served by a LangGraph server (Studio, `langgraph
            dev`), whose runs bring only JSON: the graph then takes `RunSwitches` as its
            context and fills in the rest from this. Callers that pass a `DuckContext`
            as `context=` need none.
        retry_attempts: Attempts of a model call on retryable errors (connection,
            timeout, 5xx, malformed reply), with exponential backoff.
        retry_initial_interval: Seconds before the first retry.
    """
    retry = RetryPolicy(
        max_attempts=retry_attempts,
        initial_interval=retry_initial_interval,
        retry_on=is_retryable,
    )
    # A LangGraph server sends a JSON context ({} when the run sets none), which LangGraph
    # coerces into the context schema before any node runs: DuckContext(**{}) would fail.
    # A graph with a default context therefore takes only the per-run switches.
    schema: type[Any] = RunSwitches if default_context else DuckContext
    builder = StateGraph(DuckState, context_schema=schema, input_schema=InputState)
    # Nodes without a retry policy handle their model's failures themselves (a fallback,
    # or a non-fatal error event), so a retry could only repeat their events.
    nodes: tuple[tuple[str, Node, RetryPolicy | None], ...] = (
        ("context", start_turn, None),
        ("planner", write_plan, None),
        ("action", checked_answer(decide_action, SCAFFOLD_TEMPLATES), retry),
        ("coder", propose_code, None),
        ("tool", run_tools, None),
        ("step_review", review_step, None),
        # A direct answer shows a tool result as it is; the model's answers are checked.
        ("thinker", answer_directly(checked_answer(write_answer, SCAFFOLD_TEMPLATES)), retry),
        ("critic", reflect_on_turn, None),
        ("memory_policy", decide_memory, None),
    )
    for name, node, policy in nodes:
        fn: Any = _with_default_context(node, default_context) if default_context else node
        builder.add_node(name, fn, retry_policy=policy)
    # route, context and recall are one node, `context` (`nodes/turn_start.py`): as three
    # tasks of one superstep each cost LangGraph's per-task plumbing and checkpoint writes.
    builder.add_edge(START, "context")
    builder.add_conditional_edges("context", _on_loop(route_after_context))
    builder.add_edge("planner", "action")
    builder.add_conditional_edges("action", _on_loop(route_after_action))
    builder.add_edge("coder", "tool")
    builder.add_conditional_edges("tool", _on_loop(route_after_tool))
    builder.add_conditional_edges("step_review", _on_loop(route_after_step))
    builder.add_conditional_edges("thinker", _on_loop(route_after_answer))
    builder.add_conditional_edges("critic", _on_loop(route_after_critic))
    builder.add_edge("memory_policy", END)
    return builder


def build_review_graph() -> StateGraph[DuckState, DuckContext, DuckState, DuckState]:
    """The reviewers alone: `[critic] -> [memory_policy]`, as the answer's routing picks.

    Its input is a whole answered state (`review_due` off); it is compiled without a
    checkpointer, so a review reads the thread's state at its answer and writes nothing
    to the thread: it may run after the thread has moved on (`ducklm.runtime.reviews`).
    """
    builder = StateGraph(DuckState, context_schema=DuckContext)
    builder.add_node("critic", reflect_on_turn)
    builder.add_node("memory_policy", decide_memory)
    builder.add_conditional_edges(START, _on_loop(route_after_answer))
    builder.add_conditional_edges("critic", _on_loop(route_after_critic))
    builder.add_edge("memory_policy", END)
    return builder


def _on_loop(route: Callable[[DuckState], R]) -> Callable[[DuckState], Awaitable[R]]:
    """`route` as a coroutine function, so it runs on the event loop.

    An async graph runs a plain routing function in a worker thread (LangGraph wraps it
    in `run_in_executor`): a thread hop and two wake-ups for each edge taken, four a
    turn, for a function that only reads the state. `wraps` keeps its `Literal` return
    type, from which LangGraph reads the edge's destinations.
    """

    @wraps(route)
    async def on_loop(state: DuckState) -> R:
        return route(state)

    return on_loop


def _with_default_context(node: Node, default: DuckContext) -> Node:
    @wraps(node)
    async def with_context(state: DuckState, runtime: Runtime[Any]) -> dict[str, Any]:
        return await node(state, _filled(runtime, default))

    return with_context


def _filled(runtime: Runtime[Any], default: DuckContext) -> Runtime[DuckContext]:
    """`runtime` with a full DuckContext: the caller's, or the default with its switches."""
    given = runtime.context
    if isinstance(given, DuckContext):
        return runtime
    switches = given if isinstance(given, RunSwitches) else RunSwitches()
    return runtime.override(context=default.for_run(critic=switches.critic, memory=switches.memory))
