"""Conversations: the web chat's sidebar, and each one's messages."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Response, status

from ducklm.kit.ids import new_thread_id
from ducklm.kit.workspaces import requested_workspace
from ducklm.runtime.facade import DuckLM
from ducklm.server.deps import Duck, Hub
from ducklm.server.responses import ConversationDetail, errors
from ducklm.server.routes.transcript_views import TranscriptView, exchange_view
from ducklm.server.routes.views import message_view, task_view
from ducklm.server.schemas import ConversationPatch, Id, NewConversation
from ducklm.stores import Conversation

router = APIRouter(prefix="/conversations", tags=["conversations"])


@router.get("")
async def list_conversations(duck: Duck) -> list[Conversation]:
    """Conversations, most recently updated first."""
    return await duck.conversations.list()


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_conversation(body: NewConversation, duck: Duck) -> Conversation:
    """A new, empty conversation, in an allowed workspace (`422` for any other folder)."""
    workspace = await requested_workspace(duck.settings, body.workspace)
    return await duck.conversations.create(new_thread_id(), title=body.title, workspace=workspace)


@router.get("/{conversation_id}", responses=errors(404))
async def get_conversation(conversation_id: Id, duck: Duck) -> ConversationDetail:
    """The conversation with its messages and the task still open in it, if any."""
    conversation = await find_conversation(duck, conversation_id)
    messages = [m for m in map(message_view, await duck.messages(conversation_id)) if m]
    latest = await duck.tasks(conversation_id, limit=1)
    active = latest[0] if latest and latest[0].is_open else None
    return ConversationDetail(
        id=conversation.id,
        title=conversation.title,
        workspace=conversation.workspace,
        created_at=conversation.created_at,
        updated_at=conversation.updated_at,
        messages=messages,
        active_task=task_view(active) if active else None,
    )


@router.get("/{conversation_id}/transcript", responses=errors(404))
async def get_transcript(conversation_id: Id, duck: Duck) -> TranscriptView:
    """The conversation as it happened: each message with what answered it.

    Beyond the stored messages: a stopped answer's partial text, a failed turn's error,
    how each tool call was decided, and the questions asked with their answers.
    """
    await find_conversation(duck, conversation_id)
    exchanges = await duck.transcript(conversation_id)
    return TranscriptView(
        conversation_id=conversation_id, exchanges=[exchange_view(e) for e in exchanges]
    )


@router.patch("/{conversation_id}", responses=errors(404))
async def rename_conversation(
    conversation_id: Id, body: ConversationPatch, duck: Duck
) -> Conversation:
    """Set the title."""
    await find_conversation(duck, conversation_id)
    await duck.conversations.rename(conversation_id, body.title)
    return await find_conversation(duck, conversation_id)


@router.delete(
    "/{conversation_id}", status_code=status.HTTP_204_NO_CONTENT, responses=errors(404, 409)
)
async def delete_conversation(conversation_id: Id, duck: Duck, hub: Hub) -> Response:
    """Forget the conversation: its messages, tasks and events (memories stay)."""
    await find_conversation(duck, conversation_id)
    if hub.live_in(conversation_id) is not None:
        raise HTTPException(
            status.HTTP_409_CONFLICT, "the conversation is running a task: cancel it first"
        )
    await duck.forget_thread(conversation_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


async def find_conversation(duck: DuckLM, conversation_id: str) -> Conversation:
    """The conversation `conversation_id`, else a `404` that names it."""
    found = await duck.conversations.get(conversation_id)
    if found is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND, f"no conversation with id {conversation_id!r}"
        )
    return found
