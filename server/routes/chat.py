"""`POST /v1/chat` (waits for the end) and `POST /v1/chat/stream` (SSE)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from sse_starlette import EventSourceResponse

from ducklm.server.deps import Hub
from ducklm.server.schemas import ChatRequest
from ducklm.server.sse import event_stream
from ducklm.server.tasks import LiveTask

router = APIRouter(tags=["chat"])


@router.post("/chat")
async def chat(body: ChatRequest, hub: Hub) -> dict[str, Any]:
    """Run a message as a new task and answer when it ends or stops at a question."""
    live = await _start(body, hub)
    await live.finished.wait()
    return outcome(live)


@router.post("/chat/stream", response_class=EventSourceResponse)
async def chat_stream(body: ChatRequest, hub: Hub) -> EventSourceResponse:
    """Run a message as a new task; stream its events (the run outlives the connection)."""
    return event_stream(await _start(body, hub))


async def _start(body: ChatRequest, hub: Hub) -> LiveTask:
    return await hub.start(
        body.message,
        thread_id=body.conversation_id,
        workspace=body.workspace,
        critic=body.critic,
        memory=body.memory,
    )


def outcome(live: LiveTask) -> dict[str, Any]:
    """What a waiting client gets: how the run ended, with its events."""
    done = live.events[-1] if live.events else {"status": "failed", "answer": ""}
    return {
        "task_id": live.task_id,
        "conversation_id": live.thread_id,
        "status": done.get("status", "failed"),
        "answer": done.get("answer", ""),
        "pending": [
            e for e in live.events if e["type"] in {"approval_requested", "password_requested"}
        ],
        "events": live.events,
    }
