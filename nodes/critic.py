"""critic: the critic role reflects on the turn after the answer has streamed.

The reflection becomes an experience record; a suggested skill patch becomes a proposal
file in the data dir (`skill_proposals/`), never applied silently. Its failure never loses the
answer: any error becomes a non-fatal `error` event and the run still completes.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field, field_validator

from ducklm.graph.state import DuckState
from ducklm.kit.events import emit
from ducklm.learning.skill_proposals import NewProposal, write_proposal
from ducklm.stores.experience import ExperienceRecord
from ducklm.turn.prompting.structured import review_turn, unit_score

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

CRITIC_FAILED = "The critic could not review this turn; the answer is not affected."
NOT_KEPT = "The critic's reflection could not be stored; the answer is not affected."

log = logging.getLogger(__name__)


class Critique(BaseModel):
    """The critic's reflection on one turn."""

    score: float = Field(ge=0.0, le=1.0)
    summary: str
    what_worked: list[str] = Field(default_factory=list)
    what_failed: list[str] = Field(default_factory=list)
    reusable_lesson: str = ""
    suggested_skill_patch: str | None = None
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)

    _on_unit_scale = field_validator("score", "confidence", mode="before")(unit_score)


async def reflect_on_turn(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Ask the critic role to reflect; keep it as experience and maybe a skill proposal."""
    critique = await review_turn(state, runtime, "critic", Critique, failure_message=CRITIC_FAILED)
    if critique is None:
        return {"critique": None}
    try:
        record_id, proposal_id = await _keep(critique, state, runtime)
    except Exception:  # the answer is out; losing a reflection must not fail the run
        log.warning("could not store the reflection", exc_info=True)
        emit(runtime, "error", stage="critic", fatal=False, message=NOT_KEPT)
        return {"critique": critique.model_dump()}
    emit(
        runtime,
        "reflection_completed",
        experience_id=record_id,
        score=critique.score,
        summary=critique.summary,
        lesson=critique.reusable_lesson,
        proposal_id=proposal_id,
    )
    return {"critique": critique.model_dump()}


async def _keep(
    critique: Critique, state: DuckState, runtime: Runtime[DuckContext]
) -> tuple[str, str | None]:
    """Store the experience record and the proposal file, if any; their ids."""
    ctx, info = runtime.context, runtime.execution_info
    thread_id = info.thread_id if info and info.thread_id else ""
    proposal_id = None
    if critique.suggested_skill_patch:
        new = NewProposal(
            patch=critique.suggested_skill_patch,
            skill_id=state.skills[0] if state.skills else None,
            lesson=critique.reusable_lesson,
            thread_id=thread_id,
        )
        proposal_id = (
            await asyncio.to_thread(write_proposal, ctx.settings.files.skill_proposals, new)
        ).id
    record = await ctx.experience.add(
        ExperienceRecord(
            id="",
            thread_id=thread_id,
            run_id=info.run_id if info else None,
            score=critique.score,
            summary=critique.summary,
            what_worked=critique.what_worked,
            what_failed=critique.what_failed,
            lesson=critique.reusable_lesson,
            confidence=critique.confidence,
            proposal_id=proposal_id,
        )
    )
    return record.id, proposal_id
