"""`/threads/{id}/runs/{stream,wait}` and the thread-less `/runs/{stream,wait}`.

`stream` answers with SSE (see `streaming/events.py` for the events, `streaming/joining.py`
for their ids); `wait` with the run's final values as JSON. Either way the run is a task of the
server's hub (`runs/execution.py`), admitted by `runs/launch.py`: it goes on to its end if the
client leaves, unless the request said `on_disconnect: "cancel"`; `Location` names where
to rejoin it, and `POST .../runs/{run_id}/cancel` stops it (`runs/background.py`). A run on a
busy thread follows its `multitask_strategy` (`runs/multitask.py`): by default a 409 naming
the running task.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import APIRouter, HTTPException
from fastapi.responses import StreamingResponse
from sse_starlette import EventSourceResponse

from ducklm.server.agent_protocol.common.deps import DoorDep, DuckDep, HubDep
from ducklm.server.agent_protocol.common.responses import WaitedValues
from ducklm.server.agent_protocol.common.schemas import RunCreate
from ducklm.server.agent_protocol.runs.launch import admit
from ducklm.server.agent_protocol.runs.spec import stateless_run, thread_run
from ducklm.server.agent_protocol.streaming.events import WireEvent, sse_response, wait_body
from ducklm.server.agent_protocol.streaming.joining import RunHandle, follow
from ducklm.server.responses import errors, event_stream_doc
from ducklm.server.tasks import TaskHub, ThreadBusy

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
    _check_free(thread_id, body, hub)
    spec = await thread_run(thread_id, body, body.stream_modes(), duck=duck, door=door)
    handle = await admit(spec, body, duck=duck, hub=hub, door=door)
    return sse_response(_events(handle, body), _location(handle, thread_id, "stream"))


@router.post("/threads/{thread_id}/runs/wait", responses=_WAITED)
async def wait_run(
    thread_id: str, body: RunCreate, duck: DuckDep, door: DoorDep, hub: HubDep
) -> StreamingResponse:
    """Start a run on the thread and answer with its final values."""
    _check_free(thread_id, body, hub)
    spec = await thread_run(thread_id, body, ("values",), duck=duck, door=door)
    handle = await admit(spec, body, duck=duck, hub=hub, door=door)
    return _json_stream(_events(handle, body), _location(handle, thread_id, "join"))


@router.post("/runs/stream", response_class=EventSourceResponse, responses=_STREAMED)
async def stream_stateless_run(
    body: RunCreate, duck: DuckDep, door: DoorDep, hub: HubDep
) -> EventSourceResponse:
    """Run on a new thread (deleted after unless `on_completion: keep`), streamed."""
    spec = await stateless_run(body, body.stream_modes(), duck=duck, door=door)
    handle = await admit(spec, body, duck=duck, hub=hub, door=door)
    return sse_response(_events(handle, body), _location(handle, None, "stream"))


@router.post("/runs/wait", responses=_WAITED)
async def wait_stateless_run(
    body: RunCreate, duck: DuckDep, door: DoorDep, hub: HubDep
) -> StreamingResponse:
    """Run on a new thread and answer with its final values."""
    spec = await stateless_run(body, ("values",), duck=duck, door=door)
    handle = await admit(spec, body, duck=duck, hub=hub, door=door)
    return _json_stream(_events(handle, body), _location(handle, None, "join"))


def _check_free(thread_id: str, body: RunCreate, hub: TaskHub) -> None:
    # Before the request's own checks, which would answer for a busy thread less clearly
    # (a resume: "not waiting for an answer"); `admit` checks again when the run starts.
    # Another strategy makes room, or waits, instead.
    if body.multitask_strategy != "reject":
        return
    try:
        hub.check_free(thread_id)
    except ThreadBusy as exc:
        raise HTTPException(409, str(exc)) from None


def _events(handle: RunHandle, body: RunCreate) -> AsyncIterator[WireEvent]:
    return follow(handle, cancel_on_disconnect=body.on_disconnect == "cancel")


def _json_stream(events: AsyncIterator[WireEvent], headers: dict[str, str]) -> StreamingResponse:
    return StreamingResponse(wait_body(events), media_type="application/json", headers=headers)


def _location(handle: RunHandle, thread_id: str | None, rejoin: str) -> dict[str, str]:
    """Where the run is, and where a client that lost its answer rejoins it.

    `Content-Location` is read by the SDK's `on_run_created`; `Location` (the run's
    stream, or its join) is where the SDK reconnects after a dropped connection.
    """
    if thread_id is None:  # a thread-less run's thread is gone at its end: nothing to rejoin
        return {"Content-Location": f"/runs/{handle.run_id}"}
    path = f"/threads/{thread_id}/runs/{handle.run_id}"
    return {"Content-Location": path, "Location": f"{path}/{rejoin}"}
