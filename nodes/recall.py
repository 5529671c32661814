"""recall: find memories relevant to the request.

Runs beside the context node, in the same superstep (one checkpoint for both), so it
reads the request from the messages itself rather than from `task`.

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
    """Recall memories for the latest request (none until a memory store exists)."""
    del runtime  # the store, searched for `latest_request(state.messages)`, comes with #4
    return {"recalled": []} if state.recalled else {}
