"""An MCP server whose OAuth metadata points DuckLM somewhere it must not go (issue 41).

Served in the test's loop on a free loopback port: `/mcp` answers 401 with a
`WWW-Authenticate` whose `resource_metadata` is `resource_metadata`, and its own
protected resource metadata names `authorization_server`.
It keeps the paths it was asked for, so a test sees discovery begin before it is refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

OWN_METADATA = "/.well-known/oauth-protected-resource/mcp"


@dataclass
class Misleading:
    """Where the server points DuckLM; what it was asked for."""

    resource_metadata: str | None = None
    """A URL for the 401's `resource_metadata` (else its own metadata, found by path)."""
    authorization_server: str = "http://10.255.255.1/"
    """What its own metadata names as the authorization server."""
    asked: list[str] = field(default_factory=list)
    url: str = ""

    def app(self) -> Starlette:
        """The server's routes."""

        async def mcp(request: Request) -> Response:
            self.asked.append(request.url.path)
            header = "Bearer"
            if self.resource_metadata is not None:
                header = f'Bearer resource_metadata="{self.resource_metadata}"'
            return JSONResponse({"error": "unauthorized"}, 401, {"WWW-Authenticate": header})

        async def metadata(request: Request) -> Response:
            self.asked.append(request.url.path)
            body = {"resource": self.url, "authorization_servers": [self.authorization_server]}
            return JSONResponse(body)

        async def not_found(request: Request) -> Response:
            self.asked.append(request.url.path)
            return JSONResponse({"error": "not found"}, 404)

        return Starlette(
            routes=[
                Route("/mcp", mcp, methods=["GET", "POST", "DELETE"]),
                Route(OWN_METADATA, metadata),
                Route("/.well-known/oauth-protected-resource", metadata),
                Route("/{rest:path}", not_found, methods=["GET", "POST"]),
            ]
        )


@asynccontextmanager
async def misleading_server(misleading: Misleading) -> AsyncIterator[Misleading]:
    """Serve `misleading` until the block ends; its `url` is the MCP endpoint."""
    config = uvicorn.Config(misleading.app(), host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    for _ in range(3000):  # 30 s at most
        if server.started or task.done():
            break
        await asyncio.sleep(0.01)
    assert server.started, "the misleading server did not start"
    port = server.servers[0].sockets[0].getsockname()[1]
    misleading.url = f"http://127.0.0.1:{port}/mcp"
    try:
        yield misleading
    finally:
        server.should_exit = True
        await task
