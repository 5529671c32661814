"""The streamable-HTTP `/mcp` endpoint of `ducklm serve`.

The app's `GuardMiddleware` has already checked the Host (and a browser's Origin and the
body size) as for every route; here the API token is required, as a bearer token only:
MCP clients send a header, and a browser session has no business here. Requests are
stateless: a long-lived server keeps no MCP sessions, and a `chat` call streams its
progress on its own response.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import HTTPException, Request
from fastapi.security import HTTPBearer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from ducklm.runtime.facade import DuckLM
from ducklm.server.mcp_server.door import McpDoor
from ducklm.server.mcp_server.server import build_server
from ducklm.server.security import require_bearer
from ducklm.server.tasks import TaskHub

NOT_READY = "the MCP endpoint is not running (the server is starting or stopping)"
# The SDK's own Host check would refuse DUCK_ALLOWED_HOSTS; GuardMiddleware owns it.
NO_SDK_HOST_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)
_bearer = HTTPBearer(auto_error=False)


class McpEndpoint:
    """An ASGI app for `/mcp`; `running` opens it over the server's runtime and hub."""

    def __init__(self) -> None:
        self._manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def running(self, duck: DuckLM, hub: TaskHub) -> AsyncIterator[None]:
        """Serve MCP until the block ends; questions wait for the person in the web chat."""
        door = McpDoor(duck=duck, hub=hub, questions="person")
        manager = StreamableHTTPSessionManager(
            app=build_server(door), stateless=True, security_settings=NO_SDK_HOST_CHECK
        )
        async with manager.run():
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a request without the token; hand the rest to the SDK's transport."""
        request = Request(scope, receive)
        try:
            await require_bearer(request, await _bearer(request))
        except HTTPException as exc:
            await _refuse(send, exc.status_code, str(exc.detail), dict(exc.headers or {}))
            return
        if self._manager is None:
            await _refuse(send, 503, NOT_READY, {})
            return
        await self._manager.handle_request(scope, receive, send)


async def _refuse(send: Send, code: int, detail: str, headers: dict[str, str]) -> None:
    body = json.dumps({"detail": detail}).encode()
    raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    raw += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": code, "headers": raw})
    await send({"type": "http.response.body", "body": body})
