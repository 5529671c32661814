"""Routing: pure functions from state (and the run's context) to the next node."""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from ducklm.context import DuckContext
from ducklm.graph.state import DuckState


def route_after_action(state: DuckState) -> Literal["tool", "thinker"]:
    """Tool calls go to the tool node; a reply without them means it is time to answer."""
    last = state.messages[-1] if state.messages else None
    if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls):
        return "tool"
    return "thinker"


def route_after_tool(
    state: DuckState, runtime: Runtime[DuckContext]
) -> Literal["action", "thinker"]:
    """Back to the action role, unless the turn has used all its action steps."""
    if state.step >= runtime.context.settings.max_action_steps:
        return "thinker"
    return "action"


def route_after_thinker(
    state: DuckState, runtime: Runtime[DuckContext]
) -> Literal["critic", "memory_policy", "__end__"]:
    """After the answer: the critic, then the memory policy, each only when switched on."""
    del state
    if runtime.context.critic_enabled:
        return "critic"
    if runtime.context.memory_enabled:
        return "memory_policy"
    return "__end__"


def route_after_critic(
    state: DuckState, runtime: Runtime[DuckContext]
) -> Literal["memory_policy", "__end__"]:
    """The memory policy runs when switched on."""
    del state
    return "memory_policy" if runtime.context.memory_enabled else "__end__"
