"""The FastAPI app factory: lifespan, security, error shapes, routes and the web chat."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from ducklm.prune import auto_prune
from ducklm.runtime import DuckLM
from ducklm.server import errors
from ducklm.server.agent_protocol import agent_protocol_router
from ducklm.server.routes import api_routers, open_routers
from ducklm.server.routes.status import package_version
from ducklm.server.security import GuardMiddleware, require_token
from ducklm.server.tasks import TaskHub
from ducklm.server.token import load_token
from ducklm.server.web import ui_files, web_router
from ducklm.settings import Settings


def create_app(settings: Settings) -> FastAPI:
    """A DuckLM server app; the lifespan opens (and closes) the runtime and its stores."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.token = await load_token(settings)
        async with DuckLM.open(settings) as duck:
            app.state.duck = duck
            app.state.hub = hub = TaskHub(duck)
            hub.watch_cancels()
            # Old checkpoints go in the background: the server answers meanwhile.
            pruning = asyncio.create_task(auto_prune(settings), name="ducklm-prune")
            try:
                yield
            finally:
                await hub.close()
                await pruning

    app = FastAPI(
        title="DuckLM",
        summary="A local agent runtime: chat, tasks, approvals, memory, skills.",
        version=package_version(),
        lifespan=lifespan,
    )
    app.add_middleware(
        GuardMiddleware,
        allowed_hosts=settings.allowed_hosts,
        allowed_origins=settings.allowed_origins,
        max_body_bytes=settings.max_body_bytes,
    )
    errors.install(app)
    protected = [Depends(require_token)]
    for router in api_routers():
        app.include_router(router, prefix="/v1", dependencies=protected)
    app.include_router(agent_protocol_router(), dependencies=protected)
    for router in open_routers():
        app.include_router(router)
    app.include_router(web_router())
    app.mount("/ui", ui_files(), name="ui")
    return app
