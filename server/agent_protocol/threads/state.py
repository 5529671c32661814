"""`/threads/{id}/state` and `/threads/{id}/history`: checkpoints as `ThreadState`s."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from langgraph.errors import InvalidUpdateError

from ducklm.server.agent_protocol.common.deps import DuckDep, HubDep, ThreadDep
from ducklm.server.agent_protocol.common.responses import StateWritten, ThreadState
from ducklm.server.agent_protocol.common.schemas import (
    CheckpointRef,
    HistoryRequest,
    StateAtCheckpoint,
    StateUpdate,
)
from ducklm.server.agent_protocol.common.views import checkpoint_ref, thread_state
from ducklm.server.agent_protocol.common.wire import WireResponse
from ducklm.server.agent_protocol.common.workspace import allowed_values
from ducklm.server.agent_protocol.threads.routes import BUSY
from ducklm.server.responses import errors
from ducklm.server.tasks import ThreadBusy

router = APIRouter()

NO_CHECKPOINT = "thread {thread_id} has no checkpoint {checkpoint_id}"
BAD_UPDATE = "the update does not fit the graph's state or nodes"


@router.get("/threads/{thread_id}/state", response_model=ThreadState, responses=errors(404))
async def get_state(thread: ThreadDep, duck: DuckDep) -> WireResponse:
    """The thread's latest state: values, next nodes, tasks and their interrupts."""
    snapshot = await duck.states.snapshot(thread.thread_id)
    return WireResponse(thread_state(snapshot))


@router.get(
    "/threads/{thread_id}/state/{checkpoint_id}",
    response_model=ThreadState,
    responses=errors(404),
)
async def get_state_at(thread: ThreadDep, checkpoint_id: str, duck: DuckDep) -> WireResponse:
    """The thread's state at one checkpoint."""
    return await _state_at(thread.thread_id, checkpoint_id, duck)


@router.post(
    "/threads/{thread_id}/state/checkpoint",
    response_model=ThreadState,
    responses=errors(404),
)
async def post_state_at(thread: ThreadDep, body: StateAtCheckpoint, duck: DuckDep) -> WireResponse:
    """The thread's state at the checkpoint given whole (the latest without an id)."""
    checkpoint_id = body.checkpoint.checkpoint_id
    if checkpoint_id is None:
        return await get_state(thread, duck)
    return await _state_at(thread.thread_id, checkpoint_id, duck)


async def _state_at(thread_id: str, checkpoint_id: str, duck: DuckDep) -> WireResponse:
    snapshot = await duck.states.snapshot(thread_id, checkpoint_id)
    if snapshot.config.get("configurable", {}).get("checkpoint_id") != checkpoint_id:
        raise HTTPException(
            404, NO_CHECKPOINT.format(thread_id=thread_id, checkpoint_id=checkpoint_id)
        )
    return WireResponse(thread_state(snapshot))


@router.post("/threads/{thread_id}/state", response_model=StateWritten, responses=errors(404, 409))
async def update_state(
    thread: ThreadDep, body: StateUpdate, duck: DuckDep, hub: HubDep
) -> WireResponse:
    """Write values as if `as_node` had run; `409` while the thread runs."""
    checkpoint_id = body.checkpoint_id or (
        body.checkpoint.checkpoint_id if body.checkpoint else None
    )
    values = await allowed_values(body.values, duck.settings)  # 422 for a folder not allowed
    try:
        async with hub.claim(thread.thread_id):
            config = await duck.update_state(
                thread.thread_id, values, as_node=body.as_node, checkpoint_id=checkpoint_id
            )
    except ThreadBusy:
        raise HTTPException(409, BUSY.format(thread_id=thread.thread_id)) from None
    except (InvalidUpdateError, ValueError, KeyError):
        raise HTTPException(422, BAD_UPDATE) from None
    return WireResponse({"checkpoint": checkpoint_ref(config)})


@router.post(
    "/threads/{thread_id}/history", response_model=list[ThreadState], responses=errors(404)
)
async def get_history(thread: ThreadDep, body: HistoryRequest, duck: DuckDep) -> WireResponse:
    """The thread's states, newest first."""
    at = body.checkpoint.checkpoint_id if body.checkpoint else None
    before = body.before.checkpoint_id if isinstance(body.before, CheckpointRef) else body.before
    history = await duck.states.history(
        thread.thread_id, checkpoint_id=at, before=before, metadata=body.metadata, limit=body.limit
    )
    states = [thread_state(snapshot) for snapshot in history]
    return WireResponse(states)
