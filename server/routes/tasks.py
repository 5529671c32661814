"""Tasks: list, show, follow, continue with decisions or a password, resume, cancel."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, HTTPException, Query, status
from sse_starlette import EventSourceResponse

from ducklm.runtime.facade import DuckLM
from ducklm.server.deps import Duck, Hub
from ducklm.server.event_keys import START, parse_key
from ducklm.server.follow_elsewhere import follow_elsewhere, stored_events
from ducklm.server.responses import (
    EventView,
    TaskStatusView,
    TaskView,
    errors,
    event_stream_doc,
)
from ducklm.server.routes.views import task_view
from ducklm.server.schemas import (
    MAX_ID_LENGTH,
    ContinueRequest,
    ElicitBody,
    Id,
    PasswordBody,
    Seq,
)
from ducklm.server.sse import event_stream, keyed_stream, replay_stream
from ducklm.server.tasks import TaskNotFound
from ducklm.stores import TaskRecord
from ducklm.tools.hitl import Answer

router = APIRouter(prefix="/tasks", tags=["tasks"])
_RUN_ON = event_stream_doc("The rest of the run's events, one SSE event each, until it ends.")


@router.get("")
async def list_tasks(
    duck: Duck,
    conversation_id: Annotated[str | None, Query(max_length=MAX_ID_LENGTH)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> list[TaskView]:
    """Tasks, newest first, of one conversation or of all."""
    return [task_view(t) for t in await duck.tasks(conversation_id, limit=limit)]


@router.get("/{task_id}", responses=errors(404))
async def get_task(task_id: Id, duck: Duck, hub: Hub) -> TaskView:
    """One task, with the question it waits at (if it does)."""
    task = await _task(duck, task_id)
    if hub.live(task_id) is not None:
        # Its run has started but may not have written its first row yet.
        return task_view(task, running=True)
    return task_view(task, await duck.pending(task))


@router.get("/{task_id}/events", responses=errors(404))
async def task_events(task_id: Id, duck: Duck, after: Seq = 0) -> list[EventView]:
    """The task's audited events (every event but tokens), oldest first."""
    task = await _task(duck, task_id)
    return [EventView.model_validate(e) for e in await stored_events(duck, task, after)]


@router.get(
    "/{task_id}/stream",
    response_class=EventSourceResponse,
    responses={**errors(404), **event_stream_doc("The task's events so far, then live.")},
)
async def follow_task(
    task_id: Id,
    duck: Duck,
    hub: Hub,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> EventSourceResponse:
    """The task's events so far, then live while it runs, on whichever server runs it.

    With `Last-Event-ID` (an event's `id` from this stream, on any server), only the
    events after it.
    """
    task = await _task(duck, task_id)
    after = parse_key(last_event_id) or START
    live = hub.live(task_id)
    if live is None and task.status == "running" and hub.relay is not None:
        # Run by another server on the database: its stored events, then the relay's.
        return keyed_stream(follow_elsewhere(duck, hub.relay, task, after))
    stored = await stored_events(duck, task, after.seq)
    if live is None:
        return replay_stream(stored, after)
    # Earlier runs of the task (before its questions were answered) come from the audit
    # log; the run going on now from the hub, tokens included.
    current = {e.get("run_id") for e in live.events}
    before = [e for e in stored if e.get("run_id") not in current]
    return event_stream(live, before=before, after=after)


# The /v1 paths keep their first words: `continue/stream` answers a question (what
# LangGraph, the library and the CLI call resume) and `resume/stream` goes on after a
# restart (`continue_run`). docs/api.md says so once; the code uses the inner words.
@router.post(
    "/{task_id}/continue/stream",
    response_class=EventSourceResponse,
    responses={**errors(404, 409), **_RUN_ON},
)
async def resume_task(task_id: Id, body: ContinueRequest, hub: Hub) -> EventSourceResponse:
    """Answer the approval question the task waits at; stream the rest of the run."""
    live = await hub.answer(
        task_id,
        body.answer(),
        interrupt_id=body.interrupt_id,
        critic=body.critic,
        memory=body.memory,
    )
    return event_stream(live)


@router.post(
    "/{task_id}/resume/stream",
    response_class=EventSourceResponse,
    responses={**errors(404, 409), **_RUN_ON},
)
async def continue_task(task_id: Id, hub: Hub) -> EventSourceResponse:
    """Go on with a task interrupted by a restart (its process died mid-run); stream it."""
    return event_stream(await hub.continue_task(task_id))


@router.post(
    "/{task_id}/password/stream",
    response_class=EventSourceResponse,
    responses={**errors(404, 409), **_RUN_ON},
)
async def give_password(task_id: Id, body: PasswordBody, hub: Hub) -> EventSourceResponse:
    """Give the sudo password (kept in memory only) or refuse it; stream the rest."""
    return event_stream(await hub.answer(task_id, _answer_of(body)))


@router.post(
    "/{task_id}/elicitation/stream",
    response_class=EventSourceResponse,
    responses={**errors(404, 409), **_RUN_ON},
)
async def answer_server(task_id: Id, body: ElicitBody, hub: Hub) -> EventSourceResponse:
    """Answer an MCP server's question (accept with the form, decline, cancel); stream on."""
    answer = _answer_of(body)
    return event_stream(await hub.answer(task_id, answer, interrupt_id=body.interrupt_id))


def _answer_of(body: PasswordBody | ElicitBody) -> Answer:
    """The body's typed answer; one that does not fit its own shape is a 422 saying why."""
    try:
        return body.answer()
    except ValueError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None


@router.post("/{task_id}/cancel", responses=errors(404, 409))
async def cancel_task(task_id: Id, hub: Hub) -> TaskStatusView:
    """Stop a running task, or give up one that waits for an answer."""
    return TaskStatusView(task_id=task_id, status=await hub.cancel(task_id))


async def _task(duck: DuckLM, task_id: str) -> TaskRecord:
    task = await duck.task(task_id)
    if task is None:
        raise TaskNotFound(task_id)
    return task
