"""critic: the critic role judges the turn after the answer has streamed.

Its failure never loses the answer: any error becomes a non-fatal `error` event and the
run still completes. The memory issue extends the verdict into experience records.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from ducklm.context import DuckContext
from ducklm.events import emit
from ducklm.graph.state import DuckState
from ducklm.nodes.structured import review_turn

CRITIC_FAILED = "The critic could not review this turn; the answer is not affected."


class Critique(BaseModel):
    """The critic's verdict on one turn."""

    score: float = Field(ge=0.0, le=1.0)
    summary: str


async def reflect_on_turn(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Ask the critic role for a score and a summary of this turn."""
    critique = await review_turn(state, runtime, "critic", Critique, CRITIC_FAILED)
    if critique is None:
        return {"critique": None}
    emit(runtime, "reflection_completed", score=critique.score, summary=critique.summary)
    return {"critique": critique.model_dump()}
