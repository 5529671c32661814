"""`POST /v1/chat` (waits for the end) and `POST /v1/chat/stream` (SSE)."""

from __future__ import annotations

from fastapi import APIRouter
from sse_starlette import EventSourceResponse

from ducklm.kit.events import QUESTION_EVENTS
from ducklm.kit.workspaces import requested_workspace
from ducklm.server.deps import Duck, Hub
from ducklm.server.responses import ChatOutcome, errors, event_stream_doc
from ducklm.server.schemas import ChatRequest
from ducklm.server.sse import event_stream
from ducklm.server.tasks import LiveTask

router = APIRouter(tags=["chat"], responses=errors(409, 422))


@router.post("/chat")
async def chat(body: ChatRequest, duck: Duck, hub: Hub) -> ChatOutcome:
    """Run a message as a new task and answer when it ends or stops at a question."""
    live = await _start(body, duck, hub)
    await live.finished.wait()
    return outcome(live)


@router.post(
    "/chat/stream",
    response_class=EventSourceResponse,
    responses=event_stream_doc("The run's events, one SSE event each, until it ends."),
)
async def chat_stream(body: ChatRequest, duck: Duck, hub: Hub) -> EventSourceResponse:
    """Run a message as a new task; stream its events (the run outlives the connection)."""
    return event_stream(await _start(body, duck, hub))


async def _start(body: ChatRequest, duck: Duck, hub: Hub) -> LiveTask:
    # Checked here as well as in the runtime: there it would fail the run, here it is a 422.
    workspace = await requested_workspace(duck.settings, body.workspace)
    return await hub.start(
        body.message,
        thread_id=body.conversation_id,
        workspace=workspace,
        critic=body.critic,
        memory=body.memory,
        typed=body.expand,
    )


def outcome(live: LiveTask) -> ChatOutcome:
    """What a waiting client gets: how the run ended, with its events."""
    done = live.events[-1] if live.events else {"status": "failed", "answer": ""}
    return ChatOutcome.model_validate(
        {
            "task_id": live.task_id,
            "conversation_id": live.thread_id,
            "status": done.get("status", "failed"),
            "answer": done.get("answer", ""),
            "pending": [e for e in live.events if e["type"] in QUESTION_EVENTS],
            "events": live.events,
        }
    )
