"""Background runs and joining them: `/threads/{id}/runs`, `/runs`, `/runs/batch`.

As the LangGraph server's routes (`langgraph_api/api/runs.py`): create a run without
waiting (the `Run` comes back at once, `pending`), list and get runs, wait for one
(`join`: the thread's values, or its `__interrupt__` or `__error__`), follow its stream
(`GET .../stream`, `Last-Event-ID` replays what a client missed: `streaming/joining.py`), cancel
it (`interrupt` or `rollback`: `runs/cancel.py`) and delete it. Runs are admitted as
every run of the door is (`runs/launch.py`), through the run queue any worker drains
(`ducklm/stores/agent_protocol/run_queue.py`), so each is a hub task with DuckLM's bookkeeping.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any, get_args

from fastapi import APIRouter, Body, Header, HTTPException, Query, Response
from fastapi.responses import StreamingResponse
from pydantic import ValidationError
from sse_starlette import EventSourceResponse

from ducklm.server.agent_protocol.common.deps import DoorDep, DuckDep, HubDep, ThreadDep
from ducklm.server.agent_protocol.common.responses import Run, WaitedValues
from ducklm.server.agent_protocol.common.schemas import RunCreate, RunStatusFilter, StreamMode
from ducklm.server.agent_protocol.common.wire import WireResponse
from ducklm.server.agent_protocol.runs.cancel import (
    ACTIVE,
    NOTHING_TO_CANCEL,
    CancelAction,
    cancel_found,
    forget,
)
from ducklm.server.agent_protocol.runs.elsewhere import follow_elsewhere, followable
from ducklm.server.agent_protocol.runs.launch import admit
from ducklm.server.agent_protocol.runs.lookup import (
    FoundRun,
    find_run,
    run_result,
    thread_runs,
    wait_end,
)
from ducklm.server.agent_protocol.runs.spec import stateless_run, thread_run
from ducklm.server.agent_protocol.runs.views import run_status, run_view
from ducklm.server.agent_protocol.streaming.events import WireEvent, keepalive_json, sse_response
from ducklm.server.agent_protocol.streaming.joining import (
    follow,
    foreign_handle,
    parse_last_event_id,
)
from ducklm.server.responses import errors, event_stream_doc

router = APIRouter()

STILL_RUNNING = "run {run_id} is {status}: cancel it before deleting it"
BATCH = "The runs, each as `POST /runs` takes it (a `RunCreate`)."
"""Declared as plain objects: schemathesis cannot mutate a list of `RunCreate`s."""
BAD_BATCH = "runs[{index}]: {where}: {why}"
BAD_MODES = "stream_mode {value!r} is not a stream mode or a JSON list of them"
_RESULT = {**errors(404), 200: {"model": WaitedValues, "description": "The thread's values."}}


@router.post("/threads/{thread_id}/runs", response_model=Run, responses=errors(404, 409, 422))
async def create_run(
    thread_id: str, body: RunCreate, duck: DuckDep, door: DoorDep, hub: HubDep
) -> WireResponse:
    """Start a run on the thread in the background; the `Run` at once."""
    spec = await thread_run(thread_id, body, body.stream_modes(), duck=duck, door=door)
    handle = await admit(spec, body, duck=duck, hub=hub, door=door, background=True)
    view = await _created_view(handle.run_id, door)
    location = f"/threads/{thread_id}/runs/{view['run_id']}"
    return WireResponse(view, headers={"Content-Location": location})


@router.post("/runs", response_model=Run, responses=errors(404, 422))
async def create_stateless_run(
    body: RunCreate, duck: DuckDep, door: DoorDep, hub: HubDep
) -> WireResponse:
    """Start a run on a new thread in the background (deleted after unless kept)."""
    spec = await stateless_run(body, body.stream_modes(), duck=duck, door=door)
    handle = await admit(spec, body, duck=duck, hub=hub, door=door, background=True)
    return WireResponse(
        await _created_view(handle.run_id, door),
        headers={"Content-Location": f"/runs/{handle.run_id}"},
    )


@router.post("/runs/batch", response_model=list[Run], responses=errors(404, 422))
async def create_batch(
    payloads: Annotated[list[dict[str, Any]], Body(description=BATCH)],
    duck: DuckDep,
    door: DoorDep,
    hub: HubDep,
) -> WireResponse:
    """Start several thread-less background runs; their `Run`s, in order."""
    bodies = _read_batch(payloads)
    specs = [await stateless_run(b, b.stream_modes(), duck=duck, door=door) for b in bodies]
    views = []
    for spec, body in zip(specs, bodies, strict=True):
        handle = await admit(spec, body, duck=duck, hub=hub, door=door, background=True)
        views.append(await _created_view(handle.run_id, door))
    return WireResponse(views)


@router.get("/threads/{thread_id}/runs", response_model=list[Run], responses=errors(404))
async def list_runs(
    thread: ThreadDep,
    *,
    duck: DuckDep,
    door: DoorDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 10,
    offset: Annotated[int, Query(ge=0)] = 0,
    status: RunStatusFilter | None = None,
) -> WireResponse:
    """The thread's runs, newest first (runs of every door, enqueued ones too)."""
    found = await thread_runs(thread.thread_id, duck, door)
    views = [run_view(f.row, f.record) for f in found]
    views = [v for v in views if status is None or v["status"] == status]
    views.sort(key=lambda v: v["created_at"], reverse=True)
    return WireResponse(views[offset : offset + limit])


@router.get("/threads/{thread_id}/runs/{run_id}", response_model=Run, responses=errors(404))
async def get_run(thread: ThreadDep, run_id: str, duck: DuckDep, door: DoorDep) -> WireResponse:
    """One run."""
    found = await find_run(thread.thread_id, run_id, duck, door)
    return WireResponse(run_view(found.row, found.record))


@router.get("/threads/{thread_id}/runs/{run_id}/join", responses=_RESULT)
async def join_run(
    thread: ThreadDep, run_id: str, duck: DuckDep, door: DoorDep, hub: HubDep
) -> StreamingResponse:
    """Wait for the run's end; the thread's values (or `__interrupt__`, `__error__`)."""
    found = await find_run(thread.thread_id, run_id, duck, door)
    return _result_response(found, duck, door, hub)


@router.post(
    "/threads/{thread_id}/runs/{run_id}/cancel",
    status_code=202,
    responses={**_RESULT, 202: {"description": "Cancelled."}, **errors(404)},
)
async def cancel_run(
    thread: ThreadDep,
    run_id: str,
    *,
    duck: DuckDep,
    door: DoorDep,
    hub: HubDep,
    wait: Annotated[str, Query()] = "false",
    action: Annotated[str, Query()] = "interrupt",
) -> Response:
    """Cancel the run: `interrupt` keeps what it did, `rollback` deletes it and its work.

    With `wait`, the answer is the join's (the thread's values once it has stopped).
    """
    how: CancelAction = "rollback" if action == "rollback" else "interrupt"
    found = await find_run(thread.thread_id, run_id, duck, door)
    if run_status(found.row, found.record) not in ACTIVE:
        raise HTTPException(404, NOTHING_TO_CANCEL)
    await cancel_found(found, how, duck=duck, hub=hub, door=door)
    if wait.lower() in {"true", "yes", "1"} and how == "interrupt":
        return _result_response(found, duck, door, hub)
    return Response(status_code=202)


@router.get(
    "/threads/{thread_id}/runs/{run_id}/stream",
    response_class=EventSourceResponse,
    responses={**errors(404), **event_stream_doc("The run's events, from where asked.", data={})},
)
async def join_stream(
    thread: ThreadDep,
    run_id: str,
    *,
    duck: DuckDep,
    door: DoorDep,
    hub: HubDep,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
    stream_mode: str | None = None,
    cancel_on_disconnect: str = "false",
) -> EventSourceResponse:
    """Follow the run's stream: after `Last-Event-ID` (what was missed), or from now."""
    found = await find_run(thread.thread_id, run_id, duck, door)
    path = f"/threads/{thread.thread_id}/runs/{run_id}"
    headers = {"Content-Location": path, "Location": f"{path}/stream"}
    handle = door.streams.get(found.run_id)
    record = found.record
    live = hub.live(record.task_id) if handle is None and record and record.task_id else None
    if live is not None and record is not None and live.run_id == record.run_id:
        handle = foreign_handle(found.run_id, live)  # a running run of another door
    after, only = parse_last_event_id(last_event_id), _modes(stream_mode)
    cancel = cancel_on_disconnect.lower() in {"true", "yes", "1"}
    events: AsyncIterator[WireEvent]
    if handle is not None:
        events = follow(
            handle, after=after, from_now=after is None, only=only, cancel_on_disconnect=cancel
        )
    elif hub.relay is not None and followable(found, hub):  # run or enqueued elsewhere
        events = follow_elsewhere(
            found,
            duck=duck,
            door=door,
            relay=hub.relay,
            after=after,
            only=only,
            cancel_on_disconnect=cancel,
        )
    else:  # ended and not kept (not resumable, or long ago): nothing to follow
        events = _nothing()
    return sse_response(events, headers)


@router.delete("/threads/{thread_id}/runs/{run_id}", status_code=204, responses=errors(404, 409))
async def delete_run(thread: ThreadDep, run_id: str, duck: DuckDep, door: DoorDep) -> Response:
    """Delete an ended run from the thread's runs (DuckLM's audit keeps its events)."""
    found = await find_run(thread.thread_id, run_id, duck, door)
    status = run_status(found.row, found.record)
    if status in ACTIVE:
        raise HTTPException(409, STILL_RUNNING.format(run_id=run_id, status=status))
    await forget(found, door.runs)
    return Response(status_code=204)


def _result_response(
    found: FoundRun, duck: DuckDep, door: DoorDep, hub: HubDep
) -> StreamingResponse:
    async def result() -> str:
        await wait_end(found, duck, door, hub)
        return await run_result(found.thread_id, duck, door, hub)

    path = f"/threads/{found.thread_id}/runs/{found.run_id}"
    headers = {"Content-Location": path, "Location": f"{path}/join"}
    body = keepalive_json(result())
    return StreamingResponse(body, media_type="application/json", headers=headers)


async def _created_view(run_id: str, door: DoorDep) -> dict[str, Any]:
    row = await door.runs.get(run_id)
    assert row is not None  # `admit` recorded it
    # As the LangGraph server answers a new run: as it was inserted, before any worker.
    return {**run_view(row, None), "status": "pending"}


def _read_batch(payloads: list[dict[str, Any]]) -> list[RunCreate]:
    """Each payload as a `RunCreate`; `422` naming the first that is not one, and why."""
    bodies = []
    for index, payload in enumerate(payloads):
        try:
            bodies.append(RunCreate.model_validate(payload))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "run"
            problem = BAD_BATCH.format(index=index, where=where, why=first["msg"])
            raise HTTPException(422, problem) from None
    return bodies


def _modes(stream_mode: str | None) -> tuple[StreamMode, ...]:
    """`stream_mode` as the SDK sends it: one mode, or a JSON list; empty: the run's."""
    text = (stream_mode or "").strip()
    if not text:
        return ()
    try:
        modes = json.loads(text) if text.startswith("[") else [text]
    except ValueError:
        raise HTTPException(422, BAD_MODES.format(value=text)) from None
    if not isinstance(modes, list) or not set(map(str, modes)) <= set(get_args(StreamMode)):
        raise HTTPException(422, BAD_MODES.format(value=text))
    return tuple(modes)


async def _nothing() -> AsyncIterator[Any]:
    return
    yield
