"""The web chat: `/` (the chat, or how to log in) and `/ui/...` (its files).

No page or file carries the API token: a logged-in browser holds a session cookie
(`server/session.py`), and `/` without one only says how to log in. The security
headers (CSP, no framing, no referrer) come from `GuardMiddleware` on every HTML answer.
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

from ducklm.server.session import browser_session

REASON_SLOT = "<!--reason-->"
ASSET_SUFFIXES = frozenset({".js", ".css", ".svg", ".png", ".ico", ".html"})
UI_DIR = Path(str(files("ducklm.ui")))


def web_router() -> APIRouter:
    """Routes of the web chat (no token needed: `/` shows the chat to a session only)."""
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


async def login_page(reason: str = "", *, status_code: int = 200) -> HTMLResponse:
    """The page that says how to log in, with `reason` (plain text) above it."""
    page = await _read_page("login.html")
    return _no_store(HTMLResponse(page.replace(REASON_SLOT, html.escape(reason)), status_code))


async def _index(request: Request) -> HTMLResponse:
    if browser_session(request) is None:
        return await login_page()
    return _no_store(HTMLResponse(await _read_page("index.html")))


async def _read_page(name: str) -> str:
    return await asyncio.to_thread((UI_DIR / name).read_text, encoding="utf-8")


def _no_store(response: HTMLResponse) -> HTMLResponse:
    # What `/` shows depends on the cookie: no cache may keep one answer for the other.
    response.headers["Cache-Control"] = "no-store"
    response.headers["Vary"] = "Cookie"
    return response
