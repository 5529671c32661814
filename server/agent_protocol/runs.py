"""`/threads/{id}/runs/{stream,wait}` and the thread-less `/runs/{stream,wait}`.

`stream` answers with SSE (see `streaming.py` for the events); `wait` with the run's
final values as JSON. Either way the run is the server's: it goes on to its end if the
client leaves, unless the request said `on_disconnect: "cancel"`.
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from fastapi.responses import StreamingResponse
from sse_starlette import EventSourceResponse

from ducklm.runtime import DuckLM
from ducklm.server.agent_protocol.deps import Door, DoorDep, DuckDep, HubDep, ThreadClaims
from ducklm.server.agent_protocol.execution import RunHandle
from ducklm.server.agent_protocol.responses import RunResult
from ducklm.server.agent_protocol.run_spec import RunSpec, stateless_run, thread_run
from ducklm.server.agent_protocol.schemas import RunCreate
from ducklm.server.agent_protocol.streaming import sse_response, wait_body
from ducklm.server.responses import errors, event_stream_doc
from ducklm.server.tasks import ThreadBusy

router = APIRouter()

_STREAMED = {
    **errors(404, 409),
    **event_stream_doc("The run's events as the LangGraph server streams them.", data={}),
}
_WAITED = {**errors(404, 409), 200: {"model": RunResult, "description": "The run's result."}}

BUSY = "thread {thread_id} is already running; wait for its run to end"


@router.post(
    "/threads/{thread_id}/runs/stream", response_class=EventSourceResponse, responses=_STREAMED
)
async def stream_run(
    thread_id: str, body: RunCreate, duck: DuckDep, door: DoorDep, hub: HubDep
) -> EventSourceResponse:
    """Start a run on the thread and stream its events."""
    spec = await thread_run(thread_id, body, body.stream_modes(), duck=duck, door=door)
    handle = await _start(spec, body, duck, door, hub)
    return sse_response(handle.events(), _location(spec, thread_id))


@router.post("/threads/{thread_id}/runs/wait", responses=_WAITED)
async def wait_run(
    thread_id: str, body: RunCreate, duck: DuckDep, door: DoorDep, hub: HubDep
) -> StreamingResponse:
    """Start a run on the thread and answer with its final values."""
    spec = await thread_run(thread_id, body, ("values",), duck=duck, door=door)
    handle = await _start(spec, body, duck, door, hub)
    return _json_stream(handle, _location(spec, thread_id))


@router.post("/runs/stream", response_class=EventSourceResponse, responses=_STREAMED)
async def stream_stateless_run(
    body: RunCreate, duck: DuckDep, door: DoorDep, hub: HubDep
) -> EventSourceResponse:
    """Run on a new thread (deleted after unless `on_completion: keep`), streamed."""
    spec = await stateless_run(body, body.stream_modes(), duck=duck, door=door)
    handle = await _start(spec, body, duck, door, hub)
    return sse_response(handle.events(), _location(spec, None))


@router.post("/runs/wait", responses=_WAITED)
async def wait_stateless_run(
    body: RunCreate, duck: DuckDep, door: DoorDep, hub: HubDep
) -> StreamingResponse:
    """Run on a new thread and answer with its final values."""
    spec = await stateless_run(body, ("values",), duck=duck, door=door)
    handle = await _start(spec, body, duck, door, hub)
    return _json_stream(handle, _location(spec, None))


async def _start(
    spec: RunSpec, body: RunCreate, duck: DuckLM, door: Door, hub: ThreadClaims
) -> RunHandle:
    try:
        return await door.runs.start(
            spec, graph=duck.graph, hub=hub, cancel_on_disconnect=body.on_disconnect == "cancel"
        )
    except ThreadBusy:
        raise HTTPException(409, BUSY.format(thread_id=spec.thread_id)) from None


def _json_stream(handle: RunHandle, headers: dict[str, str]) -> StreamingResponse:
    return StreamingResponse(
        wait_body(handle.events()), media_type="application/json", headers=headers
    )


def _location(spec: RunSpec, thread_id: str | None) -> dict[str, str]:
    # The SDK reads run and thread ids from Content-Location (`on_run_created`). No
    # `Location`: that names a stream to rejoin, which this door does not keep.
    path = f"/threads/{thread_id}/runs/{spec.run_id}" if thread_id else f"/runs/{spec.run_id}"
    return {"Content-Location": path}
