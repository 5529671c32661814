"""The FastAPI app factory: lifespan, security, error shapes, routes and the web chat."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from starlette.routing import Route

from ducklm.config.settings import Settings
from ducklm.kit.token import load_token
from ducklm.runtime.facade import DuckLM
from ducklm.server import errors
from ducklm.server.agent_protocol import agent_protocol_router
from ducklm.server.docs import add_api_docs
from ducklm.server.login import browser_router, codes_router
from ducklm.server.mcp_server.http import McpEndpoint
from ducklm.server.observability import scrape
from ducklm.server.observability.metrics import RunMetrics
from ducklm.server.observability.tracing import traced
from ducklm.server.reaping import reaping
from ducklm.server.routes import api_routers, open_routers
from ducklm.server.routes.files import upload_cap
from ducklm.server.routes.status import package_version
from ducklm.server.security import GuardMiddleware, require_bearer, require_token
from ducklm.server.session import Logins
from ducklm.server.tasks import TaskHub
from ducklm.server.web import ui_files, web_router
from ducklm.stores.prune import auto_prune
from ducklm.stores.relay import relay_of


def create_app(settings: Settings) -> FastAPI:
    """A DuckLM server app; the lifespan opens (and closes) the runtime and its stores."""
    mcp = McpEndpoint()  # DuckLM as an MCP server, at /mcp (`server/mcp_server/`)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.token = await load_token(settings)
        await app.state.logins.load()  # browsers logged in before a restart stay so
        relay = relay_of(settings.database_url)  # live events between servers
        async with traced(settings), DuckLM.open(settings) as duck, relay as relay_open:
            app.state.duck = duck
            duck.observer = app.state.metrics
            # The embedding model loads behind the server, not before it (`/health` says).
            duck.warm_up()
            app.state.hub = hub = TaskHub(duck, relay_open)
            hub.watch_cancels()
            # Old checkpoints go in the background: the server answers meanwhile.
            pruning = asyncio.create_task(auto_prune(settings), name="ducklm-prune")
            try:
                async with mcp.running(duck, hub), reaping(duck, hub):
                    yield
            finally:
                await hub.close()
                await pruning

    app = FastAPI(
        title="DuckLM",
        summary="A local agent runtime: chat, tasks, approvals, memory, skills.",
        version=package_version(),
        lifespan=lifespan,
        # `add_api_docs` adds the schema behind the token, the CDN docs only if asked.
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    # Made here, not in the lifespan: `ducklm serve` makes its first code before serving.
    app.state.logins = Logins(settings.files.browser_sessions)
    app.state.metrics = RunMetrics()  # a registry per app: apps in one process stay apart
    app.add_middleware(
        GuardMiddleware,
        allowed_hosts=settings.allowed_hosts,
        allowed_origins=settings.allowed_origins,
        max_body_bytes=settings.max_body_bytes,
        large_bodies=[upload_cap(settings.upload_max_bytes)],
    )
    errors.install(app)
    protected = [Depends(require_token)]
    for router in api_routers():
        app.include_router(router, prefix="/v1", dependencies=protected)
    app.include_router(codes_router(), prefix="/v1", dependencies=[Depends(require_bearer)])
    app.include_router(agent_protocol_router(), dependencies=protected)
    app.include_router(scrape.router, dependencies=protected)
    app.router.routes.append(Route("/mcp", mcp))  # an ASGI app with its own bearer check
    add_api_docs(app, interactive=settings.api_docs)
    for router in open_routers():
        app.include_router(router)
    app.include_router(browser_router())
    app.include_router(web_router())
    app.mount("/ui", ui_files(), name="ui")
    return app
