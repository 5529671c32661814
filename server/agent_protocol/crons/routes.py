"""`/runs/crons` and `/threads/{id}/runs/crons`: create, get, update, delete, search, count.

As the LangGraph server's cron routes (`langgraph_api/api/runs.py`). Thin: the checks
and shapes are `rows.py`'s, the table `ducklm/stores/agent_protocol/crons.py`'s; a change
wakes the scheduler, which fires the runs (`scheduler.py`, `firing.py`).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Response

from ducklm.server.agent_protocol.common.deps import DoorDep, DuckDep, ThreadDep
from ducklm.server.agent_protocol.common.identity import ASSISTANT_ID, GRAPH_ID, is_assistant
from ducklm.server.agent_protocol.common.wire import WireResponse
from ducklm.server.agent_protocol.crons.rows import cron_view, new_cron, patched
from ducklm.server.agent_protocol.crons.schemas import (
    Cron,
    CronCreate,
    CronFilter,
    CronPatch,
    CronSearch,
)
from ducklm.server.responses import errors
from ducklm.stores.agent_protocol.crons import CronRow

router = APIRouter()

NOT_FOUND = "Cron with ID {cron_id} not found"
NO_ASSISTANT = "assistant {assistant_id} not found: use {graph_id!r}"


@router.post("/runs/crons", response_model=Cron, responses=errors(404, 422))
async def create_cron(body: CronCreate, duck: DuckDep, door: DoorDep) -> WireResponse:
    """A cron whose every run gets a new thread."""
    return await _create(body, None, duck, door)


@router.post("/threads/{thread_id}/runs/crons", response_model=Cron, responses=errors(404, 422))
async def create_thread_cron(
    thread: ThreadDep, body: CronCreate, duck: DuckDep, door: DoorDep
) -> WireResponse:
    """A cron whose runs go on the thread, one after the other."""
    return await _create(body, thread.thread_id, duck, door)


@router.get("/runs/crons/{cron_id}", response_model=Cron, responses=errors(404))
async def get_cron(cron_id: str, door: DoorDep) -> WireResponse:
    """One cron."""
    return WireResponse(cron_view(await _found(cron_id, door)))


@router.patch("/runs/crons/{cron_id}", response_model=Cron, responses=errors(400, 404, 422))
async def patch_cron(cron_id: str, patch: CronPatch, duck: DuckDep, door: DoorDep) -> WireResponse:
    """Change a cron: only the fields sent (`metadata` is merged)."""
    row = await patched(await _found(cron_id, door), patch, duck, door.scheduler.clock())
    await door.crons.replace(row)
    door.scheduler.wake()
    return WireResponse(cron_view(row))


@router.delete("/runs/crons/{cron_id}", status_code=204, responses=errors(404))
async def delete_cron(cron_id: str, door: DoorDep) -> Response:
    """Delete a cron (a run it started goes on; its ticks stay on record)."""
    if not await door.crons.delete(cron_id):
        raise HTTPException(404, NOT_FOUND.format(cron_id=cron_id))
    return Response(status_code=204)


@router.post("/runs/crons/search", response_model=list[Cron], responses=errors(422))
async def search_crons(body: CronSearch, door: DoorDep) -> WireResponse:
    """The crons that match, sorted and paged; each with the fields asked (`select`)."""
    rows = await _matching(body, door, enabled=body.enabled)
    rows.sort(
        key=lambda row: _sort_key(row, body.sort_by), reverse=body.sort_order.lower() == "desc"
    )
    views = [cron_view(row) for row in rows[body.offset : body.offset + body.limit]]
    if body.select:
        views = [{key: view[key] for key in body.select} for view in views]
    return WireResponse(views)


@router.post("/runs/crons/count", response_model=int, responses=errors(422))
async def count_crons(body: CronFilter, door: DoorDep) -> WireResponse:
    """How many crons match."""
    return WireResponse(len(await _matching(body, door, enabled=None)))


async def _create(
    body: CronCreate, thread_id: str | None, duck: DuckDep, door: DoorDep
) -> WireResponse:
    _check_assistant(body.assistant_id)
    row = await new_cron(body, thread_id, duck, door.scheduler.clock())
    await door.crons.add(row)
    door.scheduler.wake()
    return WireResponse(cron_view(row))


async def _found(cron_id: str, door: DoorDep) -> CronRow:
    row = await door.crons.get(cron_id)
    if row is None:
        raise HTTPException(404, NOT_FOUND.format(cron_id=cron_id))
    return row


async def _matching(body: CronFilter, door: DoorDep, *, enabled: bool | None) -> list[CronRow]:
    if body.assistant_id is not None and not is_assistant(body.assistant_id):
        return []  # the one assistant's crons are all there are
    rows = await door.crons.matching(
        assistant_id=ASSISTANT_ID if body.assistant_id else None,
        thread_id=body.thread_id,
        enabled=enabled,
    )
    wanted = body.metadata or {}
    return [r for r in rows if all(r.metadata.get(k) == v for k, v in wanted.items())]


def _sort_key(row: CronRow, field: str) -> tuple[bool, Any]:
    value = getattr(row, field)
    return (value is not None, value if value is not None else "")


def _check_assistant(assistant_id: str) -> None:
    if not is_assistant(assistant_id):
        raise HTTPException(404, NO_ASSISTANT.format(assistant_id=assistant_id, graph_id=GRAPH_ID))
