"""recall: find memories relevant to the task.

The memory store arrives with the memory issue. The recall role chooses among
candidates; with no store there are none, so no model call is made and the turn
carries an empty `recalled` list.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ducklm.context import DuckContext
from ducklm.graph.state import DuckState


async def recall_memories(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Recall memories for `state.task` (none until a memory store exists)."""
    del runtime  # the memory store will come through the context
    if state.recalled:
        return {"recalled": []}
    return {}
