"""Localhost agents are attacked through the browser: Host, Origin, body size, token.

A page on any site can make the browser send requests to 127.0.0.1; DNS rebinding lets
it read the answers under its own name. So every request must name a loopback (or an
allowed) host, state-changing requests from a foreign origin are refused, and the API
wants a bearer token that only the web chat's own page carries.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ducklm.server.token import same_token

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def host_name(host_header: str) -> str:
    """The name part of a Host header (`[::1]:8000` -> `[::1]`, `a:1` -> `a`)."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or name to bind or a Host name) is this machine only."""
    name = host_name(host) if not host.count(":") > 1 else host
    return name in LOOPBACK_HOSTS or name.startswith("127.")


class GuardMiddleware:
    """Pure ASGI (so SSE streams pass through untouched): Host, Origin and body checks."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        max_body_bytes: int,
    ) -> None:
        self.app = app
        self.hosts = LOOPBACK_HOSTS | {h.lower() for h in allowed_hosts}
        self.origins = {o.rstrip("/").lower() for o in allowed_origins}
        self.max_body = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse what fails a check; pass the rest on with its body counted."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        problem = self._refusal(scope, headers)
        if problem is not None:
            await _send_error(send, *problem)
            return
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit() or int(length) > self.max_body:
                await _send_error(send, 413, self._too_large())
                return
            await self.app(scope, receive, send)
            return
        # A chunked body has no length to check: read it (up to the cap) before the app.
        body = await _read_capped(receive, self.max_body)
        if body is None:
            await _send_error(send, 413, self._too_large())
            return
        await self.app(scope, _replay(body, receive), send)

    def _too_large(self) -> str:
        return f"the request body is larger than {self.max_body} bytes"

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        host = headers.get("host", "")
        if host_name(host) not in self.hosts and not host_name(host).startswith("127."):
            return 400, f"this server does not answer to the host {host_name(host)!r}"
        origin = headers.get("origin")
        if scope["method"] in UNSAFE_METHODS and origin is not None:
            scheme = scope.get("scheme", "http")
            own = f"{scheme}://{host}".lower()
            if origin.rstrip("/").lower() not in {own} | self.origins:
                return 403, "requests from another site's page are refused"
        return None


async def _read_capped(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or `None` once it grows past `limit`."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()  # later messages: disconnects, for SSE routes
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _send_error(send: Send, code: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": code,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


_bearer = HTTPBearer(auto_error=False, description="The token `ducklm token` prints.")


async def require_token(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """The route needs the API token, as `Authorization: Bearer` (or `x-api-key`)."""
    given = credentials.credentials if credentials else request.headers.get("x-api-key")
    if not same_token(given, request.app.state.token):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "missing or wrong access token: send 'Authorization: Bearer <token>' "
            "(`ducklm token` prints it)",
            headers={"WWW-Authenticate": "Bearer"},
        )
