"""Routing: pure functions from the state to the next node."""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import AIMessage

from ducklm.graph.state import DuckState
from ducklm.turn.coding.pending import pending_coder_calls
from ducklm.turn.tool_step.repeats import only_repeats

AfterAnswer = Literal["critic", "memory_policy", "__end__"]
AT_REST = "memory_policy"
"""The node whose next step is the end: a state written as its update rests as after an
answered turn (an imported conversation, a taint set from outside a turn)."""


def route_after_context(state: DuckState) -> Literal["planner", "action"]:
    """A turn the router marked as multi-step gets a plan first (once: not on resume)."""
    wants_plan = state.route is not None and state.route.plan
    return "planner" if wants_plan and state.plan is None else "action"


def route_after_action(
    state: DuckState,
) -> Literal["coder", "tool", "step_review", "thinker", "critic", "memory_policy", "__end__"]:
    """Tool calls go to the tool node; without them, the step review or the answer.

    Calls to the coder tools pass through the coder node first, for their proposals.
    When the action role's reply already is the answer (`final` set), the thinker is
    skipped; otherwise the thinker writes it.
    """
    last = state.messages[-1] if state.messages else None
    if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls):
        return "coder" if pending_coder_calls(state) else "tool"
    if state.current_step:
        return "step_review"
    if state.final:
        return route_after_answer(state)
    return "thinker"


def route_after_tool(state: DuckState) -> Literal["action", "step_review", "thinker"]:
    """Back to the action role, unless the turn (or plan step) used all its action steps.

    After the call of a rule shortcut or of the tool chosen by meaning (the turn's first
    step) the thinker answers from its result: the request asked for that one call and
    nothing more, and a tiny model asked again adds calls that only spoil the answer.
    A step whose every call repeated an earlier one (answered from it) brought nothing
    new: the model is going round, so the answer is written from what the turn has.
    """
    one_call = state.route is not None and (state.route.shortcut or state.route.selected)
    if one_call and state.step == 1:
        return "thinker"
    if state.step < state.step_limit and not only_repeats(state.messages):
        return "action"
    return "step_review" if state.current_step else "thinker"


def route_after_step(state: DuckState) -> Literal["action", "thinker"]:
    """The next (or retried) step goes to the action role; after the last, the answer."""
    return "action" if state.current_step else "thinker"


def route_after_answer(state: DuckState) -> AfterAnswer:
    """After the answer: the critic, then the memory policy, each only when switched on.

    When they run behind the answer (`review_due`), the turn ends here and the runner
    starts them as a review run of their own.
    """
    if state.review_due:
        return "__end__"
    if state.run_critic:
        return "critic"
    if state.run_memory_policy:
        return "memory_policy"
    return "__end__"


def route_after_critic(state: DuckState) -> Literal["memory_policy", "__end__"]:
    """The memory policy runs when switched on."""
    return "memory_policy" if state.run_memory_policy else "__end__"
