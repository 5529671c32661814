"""The review behind a conversation's last answers: what it is doing, and skipping it."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel

from ducklm.server.deps import Duck, require_conversation
from ducklm.server.responses import errors
from ducklm.server.schemas import Id

router = APIRouter(prefix="/conversations", tags=["conversations"])


class ReviewView(BaseModel):
    """The critic and memory policy behind the conversation's answers."""

    state: Literal["reviewing", "waiting", "idle"]
    """`reviewing`: one runs now; `waiting`: deferred until the conversation is idle
    (a turn or a revert runs); `idle`: none is due."""


class ReviewSkipped(BaseModel):
    """What a skip did."""

    skipped: int
    """How many reviews were skipped (recorded as skipped by the person)."""


@router.get("/{conversation_id}/review", responses=errors(404))
async def review_state(conversation_id: Id, duck: Duck) -> ReviewView:
    """Whether a review of the conversation runs or waits (the web chat's "reviewing...")."""
    await require_conversation(duck, conversation_id)
    return ReviewView(state=duck.review_state(conversation_id))


@router.post("/{conversation_id}/review/skip", responses=errors(404))
async def skip_review(conversation_id: Id, duck: Duck) -> ReviewSkipped:
    """Skip the conversation's reviews: they never run, recorded as skipped by the person."""
    await require_conversation(duck, conversation_id)
    return ReviewSkipped(skipped=await duck.skip_review(conversation_id))
