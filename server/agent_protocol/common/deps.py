"""What the Agent Protocol routes get through `Depends`: the runtime, the door, the hub."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, HTTPException, Request

from ducklm.server.agent_protocol.store.items import StoreItems
from ducklm.server.agent_protocol.streaming.joining import RunStreams
from ducklm.server.agent_protocol.threads.catalog import find_thread
from ducklm.server.agent_protocol.webhooks.delivery import Webhooks
from ducklm.server.deps import Duck, Hub
from ducklm.stores.agent_protocol.assistants import AssistantStore
from ducklm.stores.agent_protocol.crons import CronStore
from ducklm.stores.agent_protocol.run_queue import RunQueue
from ducklm.stores.agent_protocol.runs import RunStore
from ducklm.stores.agent_protocol.thread_ttl import TtlStore
from ducklm.stores.agent_protocol.threads import ThreadRecord, ThreadStore

if TYPE_CHECKING:  # the scheduler and the drainer start runs of the door: they import this
    from ducklm.server.agent_protocol.crons.scheduler import CronScheduler
    from ducklm.server.agent_protocol.runs.queue_drain import QueueDrainer


@dataclass(frozen=True)
class Door:
    """The door's own state, opened by its router's lifespan."""

    threads: ThreadStore
    """The threads' metadata (the threads themselves are conversations)."""
    runs: RunStore
    """The runs' LangGraph fields and ids (the runs themselves are DuckLM's)."""
    streams: RunStreams
    """The runs a client can follow (running, enqueued, recently ended)."""
    queue: RunQueue
    """The runs waiting to start, on every worker (`ducklm/stores/agent_protocol/run_queue.py`)."""
    drainer: QueueDrainer
    """Starts this worker's share of the queued runs (`runs/queue_drain.py`)."""
    store_items: StoreItems
    """The Store API's items: DuckLM's memories (`store/items.py`)."""
    started_at: float
    """When the door opened (the assistant's `created_at`)."""
    version: str
    """DuckLM's version, for `/info`."""
    assistants: AssistantStore
    """The assistants clients created (the graph's own one is not stored)."""
    ttl: TtlStore
    """The threads' times to live."""
    crons: CronStore
    """The crons (`crons/`)."""
    scheduler: CronScheduler
    """Fires the crons' runs; routes wake it when a cron changes."""
    webhooks: Webhooks
    """Sends runs' outcomes to their webhooks (`webhooks/`)."""


async def get_door(request: Request) -> Door:
    """The door's state, put in `app.state.agent_protocol` by its lifespan."""
    door: Door = request.app.state.agent_protocol
    return door


THREAD_NOT_FOUND = "Thread with ID {thread_id} not found"
"""The LangGraph server's words for a thread it does not have."""


async def get_thread(
    thread_id: str, door: Annotated[Door, Depends(get_door)], duck: Duck
) -> ThreadRecord:
    """The thread named by the path, or `404`."""
    record = await find_thread(thread_id, duck, door.threads)
    if record is None:
        raise HTTPException(404, THREAD_NOT_FOUND.format(thread_id=thread_id))
    return record


DuckDep = Duck
DoorDep = Annotated[Door, Depends(get_door)]
HubDep = Hub
ThreadDep = Annotated[ThreadRecord, Depends(get_thread)]
