"""The OpenAPI schema behind the token, and the interactive docs only when asked for.

Swagger UI and ReDoc load their scripts from a CDN: served by default, they would run
someone else's code on the origin that holds the person's session. So `/docs`, `/redoc`
and `/docs/oauth2-redirect` exist only with `DUCK_API_DOCS=1`, under a CSP that names
that CDN; `/openapi.json` is always there for clients that hold the token or a session.
"""

from __future__ import annotations

from fastapi import Depends, FastAPI
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse, JSONResponse

from ducklm.server.security import require_token

OPENAPI_URL = "/openapi.json"
OAUTH2_REDIRECT_URL = "/docs/oauth2-redirect"
CDN = "https://cdn.jsdelivr.net"
# What the docs pages load (FastAPI's defaults): the CDN's scripts and styles, Google
# Fonts for ReDoc, FastAPI's favicon; inline scripts start them; ReDoc runs a blob worker.
DOCS_CSP = (
    f"default-src 'self'; script-src 'self' 'unsafe-inline' {CDN}; "
    f"style-src 'self' 'unsafe-inline' {CDN} https://fonts.googleapis.com; "
    "font-src 'self' https://fonts.gstatic.com; "
    "img-src 'self' data: https://fastapi.tiangolo.com https://cdn.redoc.ly; "
    "worker-src 'self' blob:; connect-src 'self'; object-src 'none'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


def add_api_docs(app: FastAPI, *, interactive: bool) -> None:
    """Add `/openapi.json` (behind `require_token`) and, if `interactive`, the docs pages.

    The app must be made with `openapi_url=None` (FastAPI would add an open schema route
    and its CDN docs itself).
    """

    async def openapi() -> JSONResponse:
        return JSONResponse(app.openapi())

    app.add_api_route(
        OPENAPI_URL, openapi, include_in_schema=False, dependencies=[Depends(require_token)]
    )
    if not interactive:
        return

    async def swagger() -> HTMLResponse:
        page = get_swagger_ui_html(
            openapi_url=OPENAPI_URL, title=app.title, oauth2_redirect_url=OAUTH2_REDIRECT_URL
        )
        return _with_docs_csp(page)

    async def redoc() -> HTMLResponse:
        return _with_docs_csp(get_redoc_html(openapi_url=OPENAPI_URL, title=app.title))

    async def oauth2_redirect() -> HTMLResponse:
        return _with_docs_csp(get_swagger_ui_oauth2_redirect_html())

    app.add_api_route("/docs", swagger, include_in_schema=False)
    app.add_api_route("/redoc", redoc, include_in_schema=False)
    app.add_api_route(OAUTH2_REDIRECT_URL, oauth2_redirect, include_in_schema=False)


def _with_docs_csp(page: HTMLResponse) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = DOCS_CSP
    return page
