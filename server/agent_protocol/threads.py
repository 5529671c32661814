"""`/threads`: create, get, update metadata, delete, search.

A thread is a DuckLM conversation (`catalog.py`): values, status and interrupts are read
from the checkpointer and DuckLM's tasks each time; the door's table holds metadata only.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from fastapi import APIRouter, HTTPException, Response

from ducklm.server.agent_protocol.catalog import all_threads, create_thread, find_thread, load_view
from ducklm.server.agent_protocol.deps import DoorDep, DuckDep, HubDep, ThreadDep
from ducklm.server.agent_protocol.identity import ALIASES, GRAPH_ID
from ducklm.server.agent_protocol.responses import SelectedThread, Thread
from ducklm.server.agent_protocol.schemas import ThreadCreate, ThreadPatch, ThreadSearch
from ducklm.server.agent_protocol.store import ThreadRecord
from ducklm.server.agent_protocol.wire import WireResponse, dumps
from ducklm.server.responses import errors
from ducklm.server.tasks import ThreadBusy

router = APIRouter()

ALREADY_EXISTS = "Thread with ID {thread_id} already exists"
BUSY = "thread {thread_id} is running; wait for its run to end"


@router.post("/threads", response_model=Thread, responses=errors(409))
async def create(body: ThreadCreate, duck: DuckDep, door: DoorDep, hub: HubDep) -> WireResponse:
    """A new thread (a random id unless given); `if_exists: do_nothing` returns the old one."""
    thread_id = str(body.thread_id or uuid.uuid4())
    record = await create_thread(thread_id, body.metadata or {}, duck, door.threads)
    if record is None:
        record = await find_thread(thread_id, duck, door.threads)
        if body.if_exists == "raise" or record is None:
            raise HTTPException(409, ALREADY_EXISTS.format(thread_id=thread_id))
    return WireResponse(await load_view(record, duck, hub))


@router.get("/threads/{thread_id}", response_model=Thread, responses=errors(404))
async def get_thread(thread: ThreadDep, duck: DuckDep, hub: HubDep) -> WireResponse:
    """One thread."""
    return WireResponse(await load_view(thread, duck, hub))


@router.patch("/threads/{thread_id}", response_model=Thread, responses=errors(404))
async def patch_thread(
    thread: ThreadDep, body: ThreadPatch, duck: DuckDep, door: DoorDep, hub: HubDep
) -> WireResponse:
    """Merge metadata into the thread's."""
    merged = await door.threads.merge(thread.thread_id, {**thread.metadata, **body.metadata})
    record = ThreadRecord(thread.thread_id, thread.created_at, thread.updated_at, merged)
    return WireResponse(await load_view(record, duck, hub))


@router.delete("/threads/{thread_id}", status_code=204, responses=errors(404, 409))
async def delete_thread(thread: ThreadDep, duck: DuckDep, door: DoorDep, hub: HubDep) -> Response:
    """Delete the thread: the conversation, its checkpoints and records; `409` while it runs."""
    try:
        async with hub.claim(thread.thread_id):
            await duck.forget_thread(thread.thread_id)  # as deleting a conversation does
            await door.threads.delete(thread.thread_id)
            await door.runs.forget_thread(thread.thread_id)
    except ThreadBusy:
        raise HTTPException(409, BUSY.format(thread_id=thread.thread_id)) from None
    return Response(status_code=204)


@router.post("/threads/search", response_model=list[SelectedThread])
async def search_threads(
    body: ThreadSearch, duck: DuckDep, door: DoorDep, hub: HubDep
) -> WireResponse:
    """Threads matching ids, metadata, values and status; sorted and paged."""
    records = [r for r in await all_threads(duck, door.threads) if _matches(r, body)]
    views = [await load_view(r, duck, hub) for r in records]
    views = [v for v in views if _state_matches(v, body)]
    reverse = body.sort_order.lower() == "desc"
    views.sort(key=lambda v: v[body.sort_by], reverse=reverse)
    page = views[body.offset : body.offset + body.limit]
    if body.select:
        page = [{k: v[k] for k in body.select} for v in page]
    headers = {"X-Pagination-Total": str(len(views))}
    if body.offset + body.limit < len(views):
        headers["X-Pagination-Next"] = str(body.offset + body.limit)
    return WireResponse(page, headers=headers)


def _matches(record: ThreadRecord, body: ThreadSearch) -> bool:
    if body.ids is not None and record.thread_id not in body.ids:
        return False
    return body.metadata is None or contains(record.metadata, _aliased(body.metadata))


def _aliased(metadata: dict[str, Any]) -> dict[str, Any]:
    # agent-chat-ui lists threads by its assistant id (`agent` by default) as graph_id.
    if metadata.get("graph_id") in ALIASES:
        return {**metadata, "graph_id": GRAPH_ID}
    return metadata


def _state_matches(view: dict[str, Any], body: ThreadSearch) -> bool:
    if body.status is not None and view["status"] != body.status:
        return False
    if body.values is None:
        return True
    return contains(json.loads(dumps(view["values"] or {})), body.values)


def contains(whole: Any, part: Any) -> bool:
    """JSON containment as PostgreSQL's `@>`, which the LangGraph server filters with."""
    if isinstance(whole, dict) and isinstance(part, dict):
        return all(k in whole and contains(whole[k], v) for k, v in part.items())
    if isinstance(whole, list) and isinstance(part, list):
        return all(any(contains(w, p) for w in whole) for p in part)
    return bool(whole == part)
