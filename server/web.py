"""The web chat: `/` (the page, carrying the API token) and `/ui/...` (its files).

The token goes into the page because only a page served from this origin can read it:
another site's page cannot read a cross-origin response, and DNS rebinding is stopped
by the Host check before this route runs.
"""

from __future__ import annotations

import asyncio
import html
import mimetypes
from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request, Response, status
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import Scope

TOKEN_PLACEHOLDER = "__DUCKLM_TOKEN__"
ASSET_SUFFIXES = frozenset({".js", ".css", ".svg", ".png", ".ico", ".html"})
UI_DIR = Path(str(files("ducklm.ui")))


def web_router() -> APIRouter:
    """Routes of the web chat (no token needed: the page is how the chat gets it)."""
    router = APIRouter(include_in_schema=False)
    router.add_api_route("/", _index, methods=["GET"], response_class=HTMLResponse)
    return router


class UiFiles(StaticFiles):
    """The web chat's assets; the package's other files (`__init__.py`...) are not served."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        """The asset at `path`, or 404 for what is not an asset."""
        if Path(path).suffix not in ASSET_SUFFIXES:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "no such file")
        return await super().get_response(path, scope)


def ui_files() -> StaticFiles:
    """The web chat's static files. Blocking (reads the MIME table): call at startup."""
    mimetypes.init()  # else the first request reads /etc/mime.types on the event loop
    return UiFiles(directory=UI_DIR)


async def _index(request: Request) -> HTMLResponse:
    page = await asyncio.to_thread((UI_DIR / "index.html").read_text, encoding="utf-8")
    token = html.escape(request.app.state.token, quote=True)
    return HTMLResponse(
        page.replace(TOKEN_PLACEHOLDER, token),
        # The page holds the token: never cached, never framed by another site.
        headers={
            "Cache-Control": "no-store",
            "X-Frame-Options": "DENY",
            "Content-Security-Policy": (
                "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
            ),
            "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff",
        },
    )
