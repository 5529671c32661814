"""A conversation's branches: each message's versions, a new one, the one shown.

`GET /v1/conversations/{id}/branches` lists the messages of the branch shown, each with
its versions (`ducklm.runtime.branches`); `POST .../branches/stream` regenerates a
message or sends an edited one as a new branch (the run streams like `/v1/chat/stream`);
`POST .../branches/switch` shows another version (it becomes the thread's head);
`GET .../branches/holding?message_id=` names the version that holds a message, so that a
search hit in another version opens that version.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, status
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse

from ducklm.runtime.branches import BranchError, BranchTurn
from ducklm.server.deps import Duck, Hub, require_conversation
from ducklm.server.responses import errors, event_stream_doc
from ducklm.server.schemas import MAX_ID_LENGTH, Body, Id
from ducklm.server.sse import event_stream

router = APIRouter(prefix="/conversations", tags=["conversations"], responses=errors(404, 409))


class ForkBody(Body):
    """A new version of the message that starts at `checkpoint_id`."""

    checkpoint_id: str = Field(min_length=1, max_length=MAX_ID_LENGTH)
    """The message's `input` checkpoint (a turn's `checkpoint_id` in the branch listing)."""
    message: str | None = Field(default=None, min_length=1, max_length=100_000)
    """The edited text; none regenerates the answer to the same text."""
    critic: bool = True
    memory: bool = True


class SwitchBody(Body):
    """The version to show: its `input` checkpoint."""

    checkpoint_id: str = Field(min_length=1, max_length=MAX_ID_LENGTH)


class VersionView(BaseModel):
    """One version of a message."""

    checkpoint_id: str
    task_id: str | None


class BranchTurnView(BaseModel):
    """A message of the branch shown: `versions[index]` is the one shown."""

    checkpoint_id: str
    fork_point: str
    """The checkpoint every version starts from (the one before the message)."""
    task_id: str | None
    index: int
    versions: list[VersionView]


class BranchesView(BaseModel):
    """The messages of the branch shown, oldest first."""

    conversation_id: str
    turns: list[BranchTurnView]


class HoldingView(BaseModel):
    """The version whose branch holds a message."""

    conversation_id: str
    checkpoint_id: str | None
    """Its `input` checkpoint, to switch to; `null`: the branch shown holds it (or none)."""


class HeadView(BaseModel):
    """The thread's head after a switch (the checkpoint the next message starts from)."""

    conversation_id: str
    head: str


@router.get("/{conversation_id}/branches")
async def list_branches(conversation_id: Id, duck: Duck) -> BranchesView:
    """Each message of the branch shown, with its versions (regenerated or edited)."""
    await require_conversation(duck, conversation_id)
    turns = await duck.branches.turns(conversation_id)
    return BranchesView(conversation_id=conversation_id, turns=[_turn_view(t) for t in turns])


@router.get("/{conversation_id}/branches/holding")
async def version_holding(
    conversation_id: Id,
    duck: Duck,
    message_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_LENGTH)],
) -> HoldingView:
    """The version to switch to for message `message_id` (a search hit's `message_id`)."""
    await require_conversation(duck, conversation_id)
    found = await duck.branches.version_holding(conversation_id, message_id)
    return HoldingView(conversation_id=conversation_id, checkpoint_id=found)


@router.post(
    "/{conversation_id}/branches/stream",
    response_class=EventSourceResponse,
    responses=event_stream_doc("The new branch's run, one SSE event each, until it ends."),
)
async def fork_branch(
    conversation_id: Id, body: ForkBody, duck: Duck, hub: Hub
) -> EventSourceResponse:
    """Regenerate a message's answer, or send an edited message, as a new branch.

    The turn runs again from the checkpoint before the message; every tool call goes
    through the policy again. `409` while the conversation runs or waits for an answer.
    """
    await require_conversation(duck, conversation_id)
    try:
        live = await hub.launch(
            conversation_id,
            lambda _: duck.fork(
                conversation_id,
                body.checkpoint_id,
                body.message,
                critic=body.critic,
                memory=body.memory,
            ),
            new_turn=True,
        )
    except BranchError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    return event_stream(live)


@router.post("/{conversation_id}/branches/switch")
async def switch_branch(conversation_id: Id, body: SwitchBody, duck: Duck, hub: Hub) -> HeadView:
    """Show another version of a message: its branch becomes the conversation's head.

    `409` while the conversation runs or waits for an answer.
    """
    await require_conversation(duck, conversation_id)
    async with hub.claim(conversation_id, new_turn=True):
        try:
            head = await duck.switch_branch(conversation_id, body.checkpoint_id)
        except BranchError as exc:
            raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    return HeadView(conversation_id=conversation_id, head=head)


def _turn_view(turn: BranchTurn) -> BranchTurnView:
    return BranchTurnView(
        checkpoint_id=turn.checkpoint_id,
        fork_point=turn.fork_point,
        task_id=turn.task_id,
        index=turn.index,
        versions=[
            VersionView(checkpoint_id=v.checkpoint_id, task_id=v.task_id) for v in turn.versions
        ],
    )
