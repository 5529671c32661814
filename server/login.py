"""Logging a browser in and out: `/login?code=`, `/session`, `/logout`, `/v1/login-codes`.

The flow, like Jupyter's: `ducklm serve` (or `ducklm open`, through `/v1/login-codes`
with the bearer token) makes a one-time code and prints `<server>/login?code=...`;
opening it sets the session cookie and goes on to the chat (or, with `&thread=ID`, to
that conversation: `ducklm open THREAD`). The page then asks `/session` for the CSRF
value it sends with each state-changing request. Sessions outlive a restart
(`server/session.py`); `DELETE /v1/browser-sessions` (`ducklm open --revoke-all`) ends
them all.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Query, Request, Response, status
from fastapi.responses import JSONResponse, RedirectResponse
from pydantic import BaseModel

from ducklm.kit.token import same_token
from ducklm.server.deps import Duck
from ducklm.server.responses import errors
from ducklm.server.schemas import MAX_ID_LENGTH
from ducklm.server.session import CSRF_HEADER, browser_session, cookie_name, logins
from ducklm.server.web import login_page

USED_CODE = "That login link has expired or was already used: run `ducklm open` for a fresh one."
# The conversation a login lands on: only checked for its length, since it only ever
# goes into the chat's own URL fragment (quoted), never into a redirect to elsewhere.
Thread = Annotated[str | None, Query(min_length=1, max_length=MAX_ID_LENGTH)]


class LoginCode(BaseModel):
    """A one-time login code."""

    code: str
    """The code itself."""
    url: str
    """The URL that logs a browser in with it (on the host the request named)."""
    expires_in: int
    """Seconds it stays usable (once)."""


class RevokedSessions(BaseModel):
    """What `DELETE /v1/browser-sessions` ended."""

    revoked: int
    """How many browser sessions were live (all of them are now logged out)."""


def browser_router() -> APIRouter:
    """`/login`, `/session` and `/logout`: routes a browser reaches without the token."""
    router = APIRouter(include_in_schema=False)
    router.add_api_route("/login", login, methods=["GET"], response_model=None)
    router.add_api_route("/session", session, methods=["GET"])
    router.add_api_route("/logout", logout, methods=["POST"], status_code=204)
    return router


def codes_router() -> APIRouter:
    """`POST /login-codes` and `DELETE /browser-sessions`: under `/v1`, bearer token only."""
    router = APIRouter(tags=["login"])
    router.add_api_route(
        "/login-codes",
        new_login_code,
        methods=["POST"],
        status_code=201,
        response_model=LoginCode,
        responses=errors(404),
    )
    router.add_api_route(
        "/browser-sessions", revoke_sessions, methods=["DELETE"], response_model=RevokedSessions
    )
    return router


async def new_login_code(request: Request, duck: Duck, thread: Thread = None) -> LoginCode:
    """A one-time code that logs a browser in (what `ducklm open [THREAD]` asks for).

    With `thread`, the URL lands on that conversation (`404` if there is none).
    """
    if thread is not None and await duck.conversations.get(thread) is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no conversation with id {thread!r}")
    store = logins(request)
    code = store.new_code()
    url = f"{str(request.base_url).rstrip('/')}/login?code={code}"
    if thread is not None:
        url += f"&thread={quote(thread, safe='')}"
    return LoginCode(code=code, url=url, expires_in=int(store.code_ttl_s))


async def revoke_sessions(request: Request) -> RevokedSessions:
    """Log every browser out, here and in the kept sessions file."""
    return RevokedSessions(revoked=await logins(request).revoke_all())


async def login(request: Request, code: str = "", thread: Thread = None) -> Response:
    """Trade a one-time code for a session cookie, then go to the chat (or a conversation)."""
    store = logins(request)
    session_id = await store.redeem(code) if code else None
    if session_id is None:
        return await login_page(USED_CODE, status_code=status.HTTP_403_FORBIDDEN)
    landing = "/" if thread is None else f"/#/c/{quote(thread, safe='')}"
    response = RedirectResponse(landing, status_code=status.HTTP_303_SEE_OTHER)
    response.headers["Cache-Control"] = "no-store"
    response.set_cookie(
        cookie_name(request),
        session_id,
        max_age=int(store.session_ttl_s),
        path="/",
        httponly=True,  # the page's scripts never need it: nothing injected can read it
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


async def session(request: Request) -> JSONResponse:
    """The CSRF value of the request's browser session (401 without one).

    Handed out here, not in a readable cookie: cookies ignore ports, so a page of
    another service on this host could read such a cookie; it cannot read this answer.
    """
    found = browser_session(request)
    if found is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED, "this browser is not logged in: run `ducklm open`"
        )
    return JSONResponse({"csrf": found.csrf}, headers={"Cache-Control": "no-store"})


async def logout(request: Request) -> Response:
    """End the browser session and clear its cookie."""
    name = cookie_name(request)
    session_id = request.cookies.get(name)
    found = logins(request).session(session_id)
    if found is not None and not same_token(request.headers.get(CSRF_HEADER), found.csrf):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, f"logging out needs the {CSRF_HEADER} header"
        )
    await logins(request).end(session_id)
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    response.delete_cookie(name, path="/", httponly=True, samesite="strict")
    return response
