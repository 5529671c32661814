"""Localhost agents are attacked through the browser: Host, Origin, body size, token.

A page on any site can make the browser send requests to 127.0.0.1; DNS rebinding lets
it read the answers under its own name. So every request must name a loopback (or an
allowed) host exactly (`server/hosts.py`), state-changing requests from a foreign origin
are refused, and the API wants the bearer token or a browser session (`server/session.py`)
plus, for a state-changing request, the CSRF header only the web chat's page can send.

Two things real LangGraph clients need (agent-chat-ui, `docs/architecture.md`):
- CORS for `DUCK_ALLOWED_ORIGINS` only (never `*`, never credentials): a page there may
  call the API with the token in `X-Api-Key`; the browser asks first (preflight).
- A JSON body whatever its content type when the request carries a header credential
  and no browser `Origin` (agent-chat-ui's `/api` passthrough sends `text/plain`). A
  cookie request keeps needing `application/json`: a cross-site form can send text/plain
  with a cookie, never with a header.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Annotated
from urllib.parse import unquote

from fastapi import Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ducklm.kit.token import same_token
from ducklm.server.hosts import absolute_target, is_allowed_host, normal_names, same_authority
from ducklm.server.session import CSRF_HEADER, browser_session

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# On every response: a browser must never guess a type (a JSON answer run as a script).
NOSNIFF = (b"x-content-type-options", b"nosniff")
# On HTML responses that set no policy of their own (only the opt-in API docs do).
HTML_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; "
        b"form-action 'self'",
    ),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)
MAX_SHOWN_HOST = 80
CORS_METHODS = b"GET, POST, PUT, PATCH, DELETE, OPTIONS"
CORS_HEADERS = b"content-type, x-api-key, authorization"
# The LangGraph SDK reads run ids and pages from these (as langgraph_api exposes them).
CORS_EXPOSED = b"content-location, x-pagination-total, x-pagination-next"
CORS_MAX_AGE = b"600"
FOREIGN_PAGE = "requests from another site's page are refused"
TWO_HOSTS = "a request may carry one Host header, not several"
OTHER_TARGET = "a request target in absolute form must name exactly the host of its Host header"


class GuardMiddleware:
    """Pure ASGI (so SSE streams pass through untouched): Host, Origin and body checks.

    It also adds the security headers to every response's start, its own refusals too.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        max_body_bytes: int,
        large_bodies: Iterable[tuple[re.Pattern[str], int]] = (),
    ) -> None:
        self.app = app
        self.hosts = normal_names(allowed_hosts)
        self.origins = {o.rstrip("/").lower() for o in allowed_origins}
        self.max_body = max_body_bytes
        self.large_bodies = tuple(large_bodies)
        """(path pattern, cap): routes that take more than `max_body` (file uploads)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse what fails a check; pass the rest on with its body counted."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        origin = headers.get("origin")
        cors = origin if origin is not None and _normal(origin) in self.origins else None
        send = _with_security_headers(send, cors)
        problem = self._refusal(scope, headers)
        if problem is not None:
            await _send_error(send, *problem)
            return
        if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            await _answer_preflight(send, cors)
            return
        scope = _json_body(_in_origin_form(scope), headers)
        cap = self._cap(scope)
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit() or int(length) > cap:
                await _send_error(send, 413, self._too_large(cap))
                return
            await self.app(scope, receive, send)
            return
        # A chunked body has no length to check: read it (up to the cap) before the app.
        body = await _read_capped(receive, cap)
        if body is None:
            await _send_error(send, 413, self._too_large(cap))
            return
        await self.app(scope, _replay(body, receive), send)

    def _cap(self, scope: Scope) -> int:
        path = str(scope.get("path", ""))
        return next(
            (cap for pattern, cap in self.large_bodies if pattern.fullmatch(path)), self.max_body
        )

    def _too_large(self, cap: int) -> str:
        return f"the request body is larger than {cap} bytes"

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        # The dict keeps the last Host; Starlette reads the first. Two are one too many.
        if sum(name.lower() == b"host" for name, _ in scope["headers"]) > 1:
            return 400, TWO_HOSTS
        host = headers.get("host", "")
        target = absolute_target(scope.get("raw_path") or b"")
        if target is not None and not same_authority(target[1], host, target[0]):
            return 400, OTHER_TARGET
        if not is_allowed_host(host, self.hosts):
            shown = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
            return 400, f"this server does not answer to the host {shown[:MAX_SHOWN_HOST]!r}"
        origin = headers.get("origin")
        if scope["method"] in UNSAFE_METHODS and origin is not None:
            scheme = scope.get("scheme", "http")
            own = f"{scheme}://{host}".lower()
            if _normal(origin) not in {own} | self.origins:
                return 403, FOREIGN_PAGE
        return None


def _in_origin_form(scope: Scope) -> Scope:
    """The scope of an absolute-form request (`GET http://host/p`) as if sent `GET /p`.

    h11 hands the whole target on as the path (and `ducklm serve`'s httptools protocol
    keeps it in `raw_path`, `server/connection.py`): the routes match the path alone.
    """
    target = absolute_target(scope.get("raw_path") or b"")
    if target is None:
        return scope
    raw_path = target[2]
    return {**scope, "raw_path": raw_path, "path": unquote(raw_path.decode("ascii", "replace"))}


def _normal(origin: str) -> str:
    return origin.rstrip("/").lower()


async def _answer_preflight(send: Send, cors: str | None) -> None:
    """A CORS preflight: allowed for `DUCK_ALLOWED_ORIGINS` only, else `403`."""
    if cors is None:
        await _send_error(send, 403, FOREIGN_PAGE)
        return
    headers = [
        (b"access-control-allow-methods", CORS_METHODS),
        (b"access-control-allow-headers", CORS_HEADERS),
        (b"access-control-max-age", CORS_MAX_AGE),
        (b"content-length", b"0"),
    ]
    await send({"type": "http.response.start", "status": 204, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def _json_body(scope: Scope, headers: dict[str, str]) -> Scope:
    """The scope with its body declared JSON, for a header-credential client off the browser.

    Only with `Authorization` or `X-Api-Key` and no `Origin`: a browser page cannot add
    either header cross-site without a preflight, so this never helps a forged form.
    """
    credential = headers.get("authorization") or headers.get("x-api-key")
    content_type = headers.get("content-type", "")
    if not credential or "origin" in headers or "json" in content_type.lower():
        return scope
    if content_type.lower().startswith("multipart/form-data"):
        return scope  # a file upload (`POST /v1/conversations/{id}/files`) says what it is
    if scope["method"] not in UNSAFE_METHODS:
        return scope
    kept = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-type"]
    return {**scope, "headers": [*kept, (b"content-type", b"application/json")]}


def _with_security_headers(send: Send, cors: str | None = None) -> Send:
    cors_headers = _cors_headers(cors)

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            names = {name.lower() for name, _ in headers}
            extra = [NOSNIFF, *cors_headers]
            content_type = dict((k.lower(), v) for k, v in headers).get(b"content-type", b"")
            if content_type.startswith(b"text/html"):
                extra.extend(HTML_HEADERS)
            headers.extend(h for h in extra if h[0] not in names)
            message = {**message, "headers": headers}
        await send(message)

    return sending


def _cors_headers(cors: str | None) -> list[tuple[bytes, bytes]]:
    # Every answer varies by Origin once one is allowed: a cache must not hand one
    # origin's answer (with its Allow-Origin) to another.
    if cors is None:
        return []
    return [
        (b"access-control-allow-origin", cors.encode("latin-1")),
        (b"access-control-expose-headers", CORS_EXPOSED),
        (b"vary", b"Origin"),
    ]


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
Bearer = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


async def require_token(request: Request, credentials: Bearer) -> None:
    """The API token (`Authorization: Bearer`, or `x-api-key`), or a browser session.

    A browser session's state-changing requests also need the `X-DuckLM-CSRF` header
    with the session's value: another page can make the browser send the cookie (a page
    on another port of this host counts as the same site), but not read that value nor
    add the header without a CORS preflight, which this server never grants.
    """
    given = _given_token(request, credentials)
    if given is not None:  # a client that sends a token is judged by the token alone
        _check_token(request, given)
        return
    session = browser_session(request)
    if session is None:
        raise _unauthorized()
    if request.method not in SAFE_METHODS and not same_token(
        request.headers.get(CSRF_HEADER), session.csrf
    ):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            f"a browser session's request needs the {CSRF_HEADER} header the web chat sends",
        )


async def require_bearer(request: Request, credentials: Bearer) -> None:
    """The API token only: for routes a browser session must not reach (login codes)."""
    _check_token(request, _given_token(request, credentials))


def _given_token(request: Request, credentials: HTTPAuthorizationCredentials | None) -> str | None:
    return credentials.credentials if credentials else request.headers.get("x-api-key") or None


def _check_token(request: Request, given: str | None) -> None:
    if not same_token(given, request.app.state.token):
        raise _unauthorized()


def _unauthorized() -> HTTPException:
    return HTTPException(
        status.HTTP_401_UNAUTHORIZED,
        "missing or wrong access token: send 'Authorization: Bearer <token>' "
        "(`ducklm token` prints it), or log the browser in with `ducklm open`",
        headers={"WWW-Authenticate": "Bearer"},
    )
