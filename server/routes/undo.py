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
    """Roll back this tool call's changes (or this upload), nothing after it."""
    turn: int | None = Field(default=None, ge=1, le=1_000_000)
    """Roll back turn N's changes (1 = the first), nothing after it."""
    turn_of: str | None = Field(default=None, min_length=1, max_length=MAX_ID_LENGTH)
    """Roll back the changes of the turn that made this tool call."""
    force: bool = False
    """Undo even over files changed since, outside DuckLM or by a later change."""
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
    changed_later: list[dict[str, Any]]
    """Later changes that touched the same files (`id`, `call_id`, `tool`, `paths`)."""
    cannot_restore: list[str]
    """Files whose earlier content was not kept (too large or too slow): left as they are."""
    diff: str
    """Unified diff from the files as they are to what the undo restores."""
    undo_id: str | None
    forced: bool
    dry_run: bool


class ChangesView(BaseModel):
    """A conversation's recorded changes of its workspace, oldest first."""

    changes: list[dict[str, Any]]
    """Each: `id`, `kind` (call / upload / undo), `call_id`, `tool`, `changed`, `undoes`,
    `at`, and `reverted_by` (the undo that reverted it, or null)."""


@router.get("/{conversation_id}/changes", responses=errors(404, 409))
async def conversation_changes(conversation_id: Id, duck: Duck) -> ChangesView:
    """What DuckLM changed in the conversation's workspace, and which of it is reverted."""
    await require_conversation(duck, conversation_id)
    try:
        return ChangesView(changes=await duck.undo_history(conversation_id))
    except UndoError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None


@router.post("/{conversation_id}/undo", responses=errors(404, 409))
async def undo_conversation(conversation_id: Id, body: UndoBody, duck: Duck, hub: Hub) -> UndoView:
    """Restore the files the conversation's tool calls changed (see `ducklm undo`).

    `409` when files changed since, outside DuckLM or by a later change (unless
    `force`), when the changes were reverted already, or while it runs.
    """
    await require_conversation(duck, conversation_id)
    if sum(x is not None for x in (body.turn, body.to_call, body.turn_of)) > 1:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            "invalid request: give one of to_call, turn and turn_of",
        )
    if hub.live_in(conversation_id) is not None:
        raise HTTPException(status.HTTP_409_CONFLICT, RUNNING)
    try:
        result = await duck.undo(
            conversation_id,
            to_call=body.to_call,
            turn=body.turn,
            turn_of=body.turn_of,
            force=body.force,
            dry_run=body.dry_run,
        )
    except LookupError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    except (UndoRefused, UndoError) as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    return UndoView.model_validate(result.summary())
