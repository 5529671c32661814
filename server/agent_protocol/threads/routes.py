"""`/threads`: create, get, update, delete, search, count, copy; TTLs.

A thread is a DuckLM conversation (`threads/catalog.py`): values, status and interrupts are
read from the checkpointer and DuckLM's tasks each time; the door's tables hold its metadata
and its TTL (`ducklm/stores/agent_protocol/thread_ttl.py`, swept by `threads/retention.py`).
A copy is a new conversation with the same checkpoints, title, workspace and metadata
(`DuckLM.copy_thread`).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from fastapi import APIRouter, HTTPException, Response

from ducklm.server.agent_protocol.common.deps import (
    THREAD_NOT_FOUND,
    Door,
    DoorDep,
    DuckDep,
    HubDep,
    ThreadDep,
)
from ducklm.server.agent_protocol.common.filters import contains
from ducklm.server.agent_protocol.common.identity import ALIASES, GRAPH_ID
from ducklm.server.agent_protocol.common.responses import SelectedThread, Thread
from ducklm.server.agent_protocol.common.schemas import (
    ThreadCount,
    ThreadCreate,
    ThreadPatch,
    ThreadSearch,
    ThreadTtl,
)
from ducklm.server.agent_protocol.common.views import iso_time
from ducklm.server.agent_protocol.common.wire import WireResponse, dumps
from ducklm.server.agent_protocol.threads.catalog import (
    all_threads,
    create_thread,
    find_thread,
    load_view,
)
from ducklm.server.agent_protocol.threads.retention import delete_thread as forget
from ducklm.server.responses import errors
from ducklm.server.tasks import TaskHub, ThreadBusy
from ducklm.stores.agent_protocol.threads import ThreadRecord

router = APIRouter()

ALREADY_EXISTS = "Thread with ID {thread_id} already exists"
BUSY = "thread {thread_id} is running; wait for its run to end"
KEEP_LATEST = (
    "ttl strategy keep_latest is not supported: use delete (ducklm prune keeps the newest "
    "checkpoints of every thread)"
)


@router.post("/threads", response_model=Thread, responses=errors(409, 422))
async def create(body: ThreadCreate, duck: DuckDep, door: DoorDep, hub: HubDep) -> WireResponse:
    """A new thread (a random id unless given); `if_exists: do_nothing` returns the old one."""
    _check_ttl(body.ttl)
    thread_id = str(body.thread_id or uuid.uuid4())
    record = await create_thread(thread_id, body.metadata or {}, duck, door.threads)
    if record is None:
        record = await find_thread(thread_id, duck, door.threads)
        if body.if_exists == "raise" or record is None:
            raise HTTPException(409, ALREADY_EXISTS.format(thread_id=thread_id))
    elif body.ttl is not None:
        await door.ttl.set(thread_id, body.ttl.strategy, body.ttl.ttl)
    return WireResponse(await load_view(record, duck, hub))


@router.get("/threads/{thread_id}", response_model=Thread, responses=errors(404))
async def get_thread(
    thread: ThreadDep, duck: DuckDep, door: DoorDep, hub: HubDep, include: str | None = None
) -> WireResponse:
    """One thread; `include=ttl` adds its TTL (when it has one)."""
    view = await load_view(thread, duck, hub)
    if "ttl" in (include or "").split(","):
        view.update(await _ttl_view(thread, door))
    return WireResponse(view)


@router.patch("/threads/{thread_id}", response_model=Thread, responses=errors(404, 422))
async def patch_thread(
    thread: ThreadDep, body: ThreadPatch, duck: DuckDep, door: DoorDep, hub: HubDep
) -> WireResponse:
    """Merge metadata into the thread's; a `ttl` replaces its TTL, counted from now."""
    _check_ttl(body.ttl)
    merged = await door.threads.merge(thread.thread_id, {**thread.metadata, **body.metadata})
    if body.ttl is not None:
        await door.ttl.set(thread.thread_id, body.ttl.strategy, body.ttl.ttl)
    record = ThreadRecord(thread.thread_id, thread.created_at, thread.updated_at, merged)
    return WireResponse(await load_view(record, duck, hub))


@router.delete("/threads/{thread_id}", status_code=204, responses=errors(404, 409))
async def delete_thread(thread: ThreadDep, duck: DuckDep, door: DoorDep, hub: HubDep) -> Response:
    """Delete the thread: the conversation, its checkpoints and records; `409` while it runs."""
    try:
        await forget(thread.thread_id, duck=duck, door=door, hub=hub)
    except ThreadBusy:
        raise HTTPException(409, BUSY.format(thread_id=thread.thread_id)) from None
    return Response(status_code=204)


@router.post("/threads/search", response_model=list[SelectedThread])
async def search_threads(
    body: ThreadSearch, duck: DuckDep, door: DoorDep, hub: HubDep
) -> WireResponse:
    """Threads matching ids, metadata, values and status; sorted and paged."""
    views = await _filtered(body, duck, door, hub)
    reverse = body.sort_order.lower() == "desc"
    views.sort(key=lambda v: v[body.sort_by], reverse=reverse)
    page = views[body.offset : body.offset + body.limit]
    if body.select:
        page = [{k: v[k] for k in body.select} for v in page]
    headers = {"X-Pagination-Total": str(len(views))}
    if body.offset + body.limit < len(views):
        headers["X-Pagination-Next"] = str(body.offset + body.limit)
    return WireResponse(page, headers=headers)


@router.post("/threads/count", response_model=int)
async def count_threads(body: ThreadCount, duck: DuckDep, door: DoorDep, hub: HubDep) -> int:
    """How many threads match ids, metadata, values and status (as a search)."""
    return len(await _filtered(body, duck, door, hub))


@router.post("/threads/{thread_id}/copy", response_model=Thread, responses=errors(404))
async def copy_thread(thread: ThreadDep, duck: DuckDep, door: DoorDep, hub: HubDep) -> WireResponse:
    """A new thread with the thread's checkpoints (its whole history) and metadata.

    Its audit starts empty, and it has no TTL until one is set, as on the LangGraph server.
    """
    copy_id = str(uuid.uuid4())
    if not await duck.copy_thread(thread.thread_id, copy_id):  # deleted meanwhile
        raise HTTPException(404, THREAD_NOT_FOUND.format(thread_id=thread.thread_id))
    await door.threads.merge(copy_id, thread.metadata)
    record = await find_thread(copy_id, duck, door.threads)
    assert record is not None  # just made
    return WireResponse(await load_view(record, duck, hub))


async def _filtered(
    body: ThreadCount, duck: DuckDep, door: Door, hub: TaskHub
) -> list[dict[str, Any]]:
    records = [r for r in await all_threads(duck, door.threads) if _matches(r, body)]
    views = [await load_view(r, duck, hub) for r in records]
    return [v for v in views if _state_matches(v, body)]


def _matches(record: ThreadRecord, body: ThreadCount) -> bool:
    if body.ids is not None and record.thread_id not in body.ids:
        return False
    return body.metadata is None or contains(record.metadata, _aliased(body.metadata))


def _aliased(metadata: dict[str, Any]) -> dict[str, Any]:
    # agent-chat-ui lists threads by its assistant id (`agent` by default) as graph_id.
    if metadata.get("graph_id") in ALIASES:
        return {**metadata, "graph_id": GRAPH_ID}
    return metadata


def _state_matches(view: dict[str, Any], body: ThreadCount) -> bool:
    if body.status is not None and view["status"] != body.status:
        return False
    if body.values is None:
        return True
    return contains(json.loads(dumps(view["values"] or {})), body.values)


def _check_ttl(ttl: ThreadTtl | None) -> None:
    if ttl is not None and ttl.strategy == "keep_latest":
        raise HTTPException(422, KEEP_LATEST)


async def _ttl_view(thread: ThreadRecord, door: Door) -> dict[str, Any]:
    ttl = await door.ttl.get(thread.thread_id)
    if ttl is None:
        return {}
    expires_at = ttl.expires_at(thread.updated_at)
    view = {
        "strategy": ttl.strategy,
        "ttl_minutes": ttl.minutes,
        "expires_at": iso_time(expires_at),
    }
    return {"ttl": view}
