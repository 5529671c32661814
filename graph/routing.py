"""Routing: pure functions from the state to the next node."""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import AIMessage

from ducklm.graph.state import DuckState

AfterAnswer = Literal["critic", "memory_policy", "__end__"]


def route_after_action(
    state: DuckState,
) -> Literal["tool", "thinker", "critic", "memory_policy", "__end__"]:
    """Tool calls go to the tool node; without them, the answer is next.

    When the action role's reply already is the answer (`final` set), the thinker is
    skipped; otherwise the thinker writes it.
    """
    last = state.messages[-1] if state.messages else None
    if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls):
        return "tool"
    if state.final:
        return route_after_answer(state)
    return "thinker"


def route_after_tool(state: DuckState) -> Literal["action", "thinker"]:
    """Back to the action role, unless the turn has used all its action steps."""
    return "thinker" if state.step >= state.step_limit else "action"


def route_after_answer(state: DuckState) -> AfterAnswer:
    """After the answer: the critic, then the memory policy, each only when switched on."""
    if state.run_critic:
        return "critic"
    if state.run_memory_policy:
        return "memory_policy"
    return "__end__"


def route_after_critic(state: DuckState) -> Literal["memory_policy", "__end__"]:
    """The memory policy runs when switched on."""
    return "memory_policy" if state.run_memory_policy else "__end__"
