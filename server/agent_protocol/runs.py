"""`/threads/{id}/runs/{stream,wait}` and the thread-less `/runs/{stream,wait}`.

`stream` answers with SSE (see `streaming.py` for the events); `wait` with the run's
final values as JSON. Either way the run is a task of the server's hub (`execution.py`):
it goes on to its end if the client leaves, unless the request said
`on_disconnect: "cancel"`, and `POST /v1/tasks/{task_id}/cancel` stops it. A run on a
thread that runs a task (of either door, or of another server) is a 409 naming it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import APIRouter, HTTPException
from fastapi.responses import StreamingResponse
from sse_starlette import EventSourceResponse

from ducklm.runtime.facade import DuckLM, NotWaitingError
from ducklm.server.agent_protocol.deps import DoorDep, DuckDep, HubDep
from ducklm.server.agent_protocol.execution import start_run
from ducklm.server.agent_protocol.responses import WaitedValues
from ducklm.server.agent_protocol.run_spec import RunSpec, stateless_run, thread_run
from ducklm.server.agent_protocol.schemas import RunCreate
from ducklm.server.agent_protocol.streaming import WireEvent, sse_response, wait_body, wire_events
from ducklm.server.responses import errors, event_stream_doc
from ducklm.server.tasks import LiveTask, TaskHub, ThreadBusy
from ducklm.tools.hitl import DecisionError

router = APIRouter()

_STREAMED = {
    **errors(404, 409),
    **event_stream_doc("The run's events as the LangGraph server streams them.", data={}),
}
_WAITED = {**errors(404, 409), 200: {"model": WaitedValues, "description": "The run's result."}}


@router.post(
    "/threads/{thread_id}/runs/stream", response_class=EventSourceResponse, responses=_STREAMED
)
async def stream_run(
    thread_id: str, body: RunCreate, duck: DuckDep, door: DoorDep, hub: HubDep
) -> EventSourceResponse:
    """Start a run on the thread and stream its events."""
    _check_free(thread_id, hub)
    spec = await thread_run(thread_id, body, body.stream_modes(), duck=duck, door=door)
    live = await _start(spec, duck, hub)
    return sse_response(_events(live, spec, body), _location(live, thread_id))


@router.post("/threads/{thread_id}/runs/wait", responses=_WAITED)
async def wait_run(
    thread_id: str, body: RunCreate, duck: DuckDep, door: DoorDep, hub: HubDep
) -> StreamingResponse:
    """Start a run on the thread and answer with its final values."""
    _check_free(thread_id, hub)
    spec = await thread_run(thread_id, body, ("values",), duck=duck, door=door)
    live = await _start(spec, duck, hub)
    return _json_stream(_events(live, spec, body), _location(live, thread_id))


@router.post("/runs/stream", response_class=EventSourceResponse, responses=_STREAMED)
async def stream_stateless_run(
    body: RunCreate, duck: DuckDep, door: DoorDep, hub: HubDep
) -> EventSourceResponse:
    """Run on a new thread (deleted after unless `on_completion: keep`), streamed."""
    spec = await stateless_run(body, body.stream_modes(), duck=duck, door=door)
    live = await _start(spec, duck, hub)
    return sse_response(_events(live, spec, body), _location(live, None))


@router.post("/runs/wait", responses=_WAITED)
async def wait_stateless_run(
    body: RunCreate, duck: DuckDep, door: DoorDep, hub: HubDep
) -> StreamingResponse:
    """Run on a new thread and answer with its final values."""
    spec = await stateless_run(body, ("values",), duck=duck, door=door)
    live = await _start(spec, duck, hub)
    return _json_stream(_events(live, spec, body), _location(live, None))


async def _start(spec: RunSpec, duck: DuckLM, hub: TaskHub) -> LiveTask:
    try:
        return await start_run(spec, duck, hub)
    except (ThreadBusy, NotWaitingError) as exc:
        raise HTTPException(409, str(exc)) from None
    except DecisionError as exc:  # decisions that do not fit the question they answer
        raise HTTPException(422, str(exc)) from None


def _check_free(thread_id: str, hub: TaskHub) -> None:
    # Before the request's own checks, which would answer for a busy thread less clearly
    # (a resume: "not waiting for an answer"); the hub checks again when the run starts.
    try:
        hub.check_free(thread_id)
    except ThreadBusy as exc:
        raise HTTPException(409, str(exc)) from None


def _events(live: LiveTask, spec: RunSpec, body: RunCreate) -> AsyncIterator[WireEvent]:
    return wire_events(live, spec, cancel_on_disconnect=body.on_disconnect == "cancel")


def _json_stream(events: AsyncIterator[WireEvent], headers: dict[str, str]) -> StreamingResponse:
    return StreamingResponse(wait_body(events), media_type="application/json", headers=headers)


def _location(live: LiveTask, thread_id: str | None) -> dict[str, str]:
    # The SDK reads run and thread ids from Content-Location (`on_run_created`). No
    # `Location`: that names a stream to rejoin, which this door does not keep (a
    # client re-attaches with `GET /v1/tasks/{task_id}/stream`).
    path = f"/threads/{thread_id}/runs/{live.run_id}" if thread_id else f"/runs/{live.run_id}"
    return {"Content-Location": path}
