"""The Agent Protocol door: the open subset of the LangGraph Server API over DuckLM's graph.

The official `langgraph-sdk` client and agent-chat-ui talk to DuckLM's own server through
it. It is a wire adapter: its runs are tasks of the server's hub (`ducklm.server.tasks`)
run by DuckLM's runner, like `/v1`'s, and its threads are DuckLM's conversations. Include
it with `app.include_router(...)`: its lifespan (merged into the app's, inside it) opens
the door's metadata table on `app.state.duck`. The app adds authentication and checks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter, Depends, FastAPI

from ducklm.server.agent_protocol.assistants import graph as assistant_graph
from ducklm.server.agent_protocol.assistants import routes as assistants
from ducklm.server.agent_protocol.common.deps import Door
from ducklm.server.agent_protocol.crons import routes as crons
from ducklm.server.agent_protocol.crons.firing import CronRuns
from ducklm.server.agent_protocol.crons.scheduler import CronScheduler
from ducklm.server.agent_protocol.runs import background, cancel_many
from ducklm.server.agent_protocol.runs import routes as runs
from ducklm.server.agent_protocol.runs.queue_drain import QueueDrainer
from ducklm.server.agent_protocol.runs.relay import relaying_on_ask
from ducklm.server.agent_protocol.store import routes as store_routes
from ducklm.server.agent_protocol.store.items import StoreItems
from ducklm.server.agent_protocol.streaming.joining import RunStreams
from ducklm.server.agent_protocol.threads import routes as threads
from ducklm.server.agent_protocol.threads import state
from ducklm.server.agent_protocol.threads.retention import sweep_forever
from ducklm.server.agent_protocol.webhooks.delivery import Webhooks
from ducklm.server.deps import single_query_values
from ducklm.server.responses import GUARDED, errors
from ducklm.server.routes.status import VERSION
from ducklm.stores.agent_protocol.assistants import AssistantStore
from ducklm.stores.agent_protocol.crons import CronStore
from ducklm.stores.agent_protocol.run_queue import RunQueue
from ducklm.stores.agent_protocol.runs import RunStore
from ducklm.stores.agent_protocol.store_index import StoreIndex
from ducklm.stores.agent_protocol.thread_ttl import TtlStore
from ducklm.stores.agent_protocol.threads import ThreadStore

__all__ = ["agent_protocol_router"]

TAG = "agent protocol"


def agent_protocol_router() -> APIRouter:
    """The door's routes, with the lifespan that opens its state."""
    router = APIRouter(
        lifespan=_lifespan,
        tags=[TAG],
        responses=errors(*GUARDED),
        # Unknown query parameters pass: LangGraph clients send some DuckLM has no use for.
        dependencies=[Depends(single_query_values)],
    )
    for module in (
        assistants,
        assistant_graph,
        threads,
        state,
        runs,
        background,
        cancel_many,
        crons,
        store_routes,
    ):
        router.include_router(module.router)
    return router


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    # The runs are the hub's: the app's lifespan cancels them at shutdown.
    duck = app.state.duck
    database = duck.database
    drainer = QueueDrainer(duck, app.state.hub)
    scheduler = CronScheduler(await CronStore.open(database))
    door = app.state.agent_protocol = Door(
        threads=await ThreadStore.open(database),
        runs=await RunStore.open(database),
        streams=RunStreams(),
        queue=await RunQueue.open(database, drainer.stale_s),
        drainer=drainer,
        store_items=StoreItems(duck.context.memory, await StoreIndex.open(database), duck.settings),
        started_at=time.time(),
        version=VERSION,
        assistants=await AssistantStore.open(database),
        ttl=await TtlStore.open(database),
        crons=scheduler.store,
        scheduler=scheduler,
        webhooks=await Webhooks.open(database),
    )
    # Crons missed while no server ran fire once now (`crons/scheduler.py`).
    scheduler.start(CronRuns(app.state.duck, app.state.hub, door))
    drainer.start(door)  # queued runs left by a stopped worker (or this one) start too
    sweeper = asyncio.create_task(
        sweep_forever(duck=duck, door=door, hub=app.state.hub), name="ducklm-thread-ttl"
    )
    try:
        # Another worker's follower asks for a run's stream held here (`runs/relay.py`).
        async with relaying_on_ask(door.streams, app.state.hub.relay):
            yield
    finally:
        sweeper.cancel()
        await asyncio.gather(sweeper, return_exceptions=True)
        await scheduler.close()
        await drainer.close()  # rows taken here are left to the other workers
        await door.webhooks.close()
