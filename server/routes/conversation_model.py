"""A conversation's model: `GET` and `PUT /v1/conversations/{id}/model`.

The model picker of the web chat and `ducklm chat --model` (over HTTP) set it; the
thinker and action roles of the conversation's later turns ask it
(`DuckLM.choose_model`). A name the model server does not offer is a 422 that lists
the ones it does.
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status
from pydantic import BaseModel, Field

from ducklm.runtime.facade import DuckLM
from ducklm.runtime.model_choice import ModelsUnavailableError, UnknownModelError
from ducklm.server.deps import Duck
from ducklm.server.responses import errors
from ducklm.server.routes.conversations import find_conversation
from ducklm.server.schemas import Body, Id

router = APIRouter(prefix="/conversations", tags=["conversations"])

MAX_MODEL_NAME = 300
"""Model ids are names or file paths; a longer one names nothing a server offers."""


class ModelChoice(Body):
    """The model a conversation answers with; `null` goes back to the configured one."""

    model: str | None = Field(min_length=1, max_length=MAX_MODEL_NAME)


class ConversationModelView(BaseModel):
    """Which model a conversation's answers come from."""

    conversation_id: str
    model: str
    """The model its next turn asks (the chosen one, else the configured one)."""
    chosen: bool
    """Whether the person chose it for this conversation."""
    default: str
    """The model configured for the answering roles (`models.yaml`)."""


@router.get("/{conversation_id}/model", responses=errors(404))
async def get_model(conversation_id: Id, duck: Duck) -> ConversationModelView:
    """The model the conversation's next turn answers with."""
    await find_conversation(duck, conversation_id)
    return await _view(duck, conversation_id)


@router.put("/{conversation_id}/model", responses=errors(422, 503))
async def put_model(conversation_id: Id, body: ModelChoice, duck: Duck) -> ConversationModelView:
    """Answer the conversation's later turns with `model`, one the model server offers.

    The history stays; a turn running now keeps the model it started with. An id not
    seen yet starts the conversation, as a message to it would (`ducklm chat --model`
    chooses before its first message).
    """
    try:
        await duck.choose_model(conversation_id, body.model)
    except UnknownModelError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
    except ModelsUnavailableError as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc)) from exc
    await duck.conversations.create(conversation_id)
    return await _view(duck, conversation_id)


async def _view(duck: DuckLM, conversation_id: str) -> ConversationModelView:
    default = duck.context.models.config("thinker").model
    chosen = await duck.model_of(conversation_id)
    return ConversationModelView(
        conversation_id=conversation_id,
        model=chosen or default,
        chosen=chosen is not None,
        default=default,
    )
