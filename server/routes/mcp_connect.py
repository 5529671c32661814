"""Connecting an MCP server behind OAuth from the web chat: start the sign-in, take the redirect.

`POST /v1/mcp/servers/{name}/connect` (the token, or a browser session with its CSRF
header, like every `/v1` change) answers the authorization URL to open. The
authorization server sends the person's browser back to `GET /v1/mcp/oauth/callback`
on the host the browser used, which carries no token: the one-time `state` of the
sign-in authorizes it (`ducklm/mcp/connect.py`). It answers a page in words.
"""

from __future__ import annotations

import html

from fastapi import APIRouter, HTTPException, Request, status
from fastapi.responses import HTMLResponse

from ducklm.mcp.connect import CALLBACK_PATH, CannotConnect, ConnectFailed, Ending
from ducklm.server.deps import Duck
from ducklm.server.responses import McpConnectView, errors

router = APIRouter(tags=["mcp"])
PAGE = "<!doctype html><meta charset=utf-8><title>DuckLM</title><p>{text}</p>"
STATUS: dict[Ending, int] = {
    "connected": status.HTTP_200_OK,
    "failed": status.HTTP_502_BAD_GATEWAY,
    "unknown": status.HTTP_400_BAD_REQUEST,
}


@router.post("/mcp/servers/{name}/connect", responses=errors(404, 409, 502))
async def connect_server(name: str, request: Request, duck: Duck) -> McpConnectView:
    """Start a person's sign-in at server `name`: the URL to open in their browser.

    A new Connect replaces one under way. `authorization_url` is `null` when the server
    asked for no sign-in (it is connected already).
    """
    redirect_uri = str(request.base_url).rstrip("/") + CALLBACK_PATH
    try:
        url = await duck.context.mcp.connections.start(name, redirect_uri)
    except LookupError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    except CannotConnect as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    except ConnectFailed as exc:
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, str(exc)) from None
    return McpConnectView(authorization_url=url)


def callback_router() -> APIRouter:
    """`GET /v1/mcp/oauth/callback`: reached without the token, by the browser's redirect."""
    callback = APIRouter(include_in_schema=False)
    callback.add_api_route(CALLBACK_PATH, oauth_callback, methods=["GET"], response_model=None)
    return callback


async def oauth_callback(
    duck: Duck,
    *,
    state: str = "",
    code: str = "",
    error: str = "",
    error_description: str = "",
    iss: str | None = None,
) -> HTMLResponse:
    """Hand the redirect to the sign-in that sent `state` (once); say how it ended."""
    why = " ".join(filter(None, (error, error_description)))
    outcome = await duck.context.mcp.connections.finish(state, code, why, iss)
    page = HTMLResponse(PAGE.format(text=html.escape(outcome.text)), STATUS[outcome.ending])
    page.headers["Cache-Control"] = "no-store"
    return page
