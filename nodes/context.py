"""context: start a turn. Reads the request, resets per-turn fields, fixes the workspace.

The token-budgeted context (memories, skills, summaries) is the memory issue's; here the
turn is set up so that every later node reads a clean, per-turn state.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from ducklm.context import DuckContext
from ducklm.graph.state import DuckState


async def prepare_turn(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Set the task from the last human message and reset the per-turn fields."""
    task = next((m.text for m in reversed(state.messages) if isinstance(m, HumanMessage)), "")
    workspace = state.workspace or str(runtime.context.settings.workspace.absolute())
    return {
        "task": task,
        "workspace": workspace,
        "step": 0,
        "observations": [],
        "final": "",
        "critique": None,
        "memory_decisions": [],
    }
