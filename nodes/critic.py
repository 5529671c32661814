"""critic: the critic role judges the turn after the answer has streamed.

Its failure never loses the answer: any error becomes a non-fatal `error` event and the
run still completes. The memory issue extends the verdict into experience records.
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from ducklm.context import DuckContext
from ducklm.events import emit
from ducklm.graph.state import DuckState
from ducklm.nodes.structured import ask_validated, system_prompt, with_system
from ducklm.nodes.transcript import transcript_text

log = logging.getLogger(__name__)

CRITIC_FAILED = "The critic could not review this turn; the answer is not affected."


class Critique(BaseModel):
    """The critic's verdict on one turn."""

    score: float = Field(ge=0.0, le=1.0)
    summary: str


async def reflect_on_turn(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Ask the critic role for a score and a summary of this turn."""
    ctx = runtime.context
    system = system_prompt(ctx, "critic", Critique.model_json_schema(), workspace=state.workspace)
    messages = with_system(system, [HumanMessage(content=transcript_text(state.messages))])
    try:
        critique = await ask_validated(ctx, "critic", Critique, messages)
    except Exception:  # the answer is already out; a broken critic must not fail the run
        log.warning("critic failed", exc_info=True)
        emit(runtime, "error", stage="critic", fatal=False, message=CRITIC_FAILED)
        return {"critique": None}
    emit(runtime, "reflection_completed", score=critique.score, summary=critique.summary)
    return {"critique": critique.model_dump()}
