"""Undo: roll back what DuckLM changed in a conversation's workspace (`ducklm.undo`)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, HTTPException, status
from pydantic import BaseModel, Field

from ducklm.server.deps import Duck, Hub, require_conversation
from ducklm.server.responses import errors
from ducklm.server.schemas import MAX_ID_LENGTH, Body, Id
from ducklm.undo import UndoError, UndoRefused

router = APIRouter(prefix="/conversations", tags=["conversations"])

RUNNING = "the conversation is running a task: undo once it has stopped, or cancel it"


class UndoBody(Body):
    """Which changes to roll back: the last turn's by default."""

    to_call: str | None = Field(default=None, min_length=1, max_length=MAX_ID_LENGTH)
    """Roll back this tool call and everything after it."""
    turn: int | None = Field(default=None, ge=1, le=1_000_000)
    """Roll back turn N (1 = the first) and everything after it."""
    force: bool = False
    """Undo even over files changed outside DuckLM since."""
    dry_run: bool = False
    """Only say what would change."""


class UndoFile(BaseModel):
    """What the undo does (or would do) to one file."""

    path: str
    action: Literal["restored", "removed", "unchanged"]


class UndoView(BaseModel):
    """An undo, done or planned."""

    thread_id: str
    workspace: str
    changes: list[dict[str, Any]]
    """The change records rolled back, oldest first (`call_id`, `tool`, `changed`...)."""
    files: list[UndoFile]
    changed_outside: list[str]
    diff: str
    """Unified diff from the files as they are to what the undo restores."""
    undo_id: str | None
    forced: bool
    dry_run: bool


@router.post("/{conversation_id}/undo", responses=errors(404, 409))
async def undo_conversation(conversation_id: Id, body: UndoBody, duck: Duck, hub: Hub) -> UndoView:
    """Restore the files the conversation's tool calls changed (see `ducklm undo`).

    `409` when files changed outside DuckLM since (unless `force`), or while it runs.
    """
    await require_conversation(duck, conversation_id)
    if body.turn is not None and body.to_call is not None:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT, "invalid request: give to_call or turn, not both"
        )
    if hub.live_in(conversation_id) is not None:
        raise HTTPException(status.HTTP_409_CONFLICT, RUNNING)
    try:
        result = await duck.undo(
            conversation_id,
            to_call=body.to_call,
            turn=body.turn,
            force=body.force,
            dry_run=body.dry_run,
        )
    except LookupError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    except (UndoRefused, UndoError) as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    return UndoView.model_validate(result.summary())
