"""context: start a turn. Reads the request, resets per-turn fields, fixes the workspace.

The token-budgeted context (memories, skills, summaries) is the memory issue's; here the
turn is set up so that every later node reads a clean, per-turn state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.runtime import Runtime

from ducklm.context import DuckContext
from ducklm.graph.state import DuckState


def latest_request(messages: Sequence[AnyMessage]) -> str:
    """The text of the last human message: what this turn is about."""
    return next((m.text for m in reversed(messages) if isinstance(m, HumanMessage)), "")


async def prepare_turn(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Set the task from the last human message, reset per-turn fields, fix the switches."""
    task = latest_request(state.messages)
    workspace = state.workspace or str(runtime.context.settings.workspace)
    fresh = {
        "task": task,
        "workspace": workspace,
        "step": 0,
        "observations": [],
        "final": "",
        "critique": None,
        "memory_decisions": [],
        "step_limit": runtime.context.settings.max_action_steps,
        "run_critic": runtime.context.critic_enabled,
        "run_memory_policy": runtime.context.memory_enabled,
    }
    # Only what changed: each written field is another blob in the checkpoint.
    return {key: value for key, value in fresh.items() if getattr(state, key) != value}
