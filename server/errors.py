"""Every error leaves as `{"detail": "<a sentence for people>"}` with a fitting status.

Domain errors map to 4xx here, so routes stay thin; anything unexpected is logged with
its traceback and answered with a 500 that carries no exception text.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from ducklm.kit.workspaces import WorkspaceError
from ducklm.mcp.errors import TypedInputError
from ducklm.runtime.facade import NotWaitingError
from ducklm.server.tasks import TaskNotFound, ThreadBusy
from ducklm.tools.hitl import DecisionError

log = logging.getLogger(__name__)

# Domain errors whose message is already written for people.
_STATUS: dict[type[Exception], int] = {
    ThreadBusy: status.HTTP_409_CONFLICT,
    NotWaitingError: status.HTTP_409_CONFLICT,
    DecisionError: status.HTTP_422_UNPROCESSABLE_CONTENT,
    # A folder the person did not allow: the request's value is refused, like any field.
    WorkspaceError: status.HTTP_422_UNPROCESSABLE_CONTENT,
    # An MCP prompt or resource the message names that cannot be used as typed.
    TypedInputError: status.HTTP_422_UNPROCESSABLE_CONTENT,
}


def install(app: FastAPI) -> None:
    """Register the handlers on `app`."""
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(TaskNotFound, _task_not_found)
    for kind in _STATUS:
        app.add_exception_handler(kind, _domain)
    app.add_exception_handler(Exception, _unexpected)


def detail(code: int, message: str, **extra: Any) -> JSONResponse:
    """The error response."""
    return JSONResponse({"detail": message, **extra}, status_code=code)


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    message = exc.detail if isinstance(exc.detail, str) else "the request was refused"
    response = detail(exc.status_code, message)
    if exc.headers:
        response.headers.update(exc.headers)
    return response


async def _validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = exc.errors()
    if any(p.get("type") == "json_invalid" for p in problems):
        return detail(status.HTTP_400_BAD_REQUEST, "the request body is not valid JSON")
    shown = [{"loc": list(p.get("loc", ())), "msg": str(p.get("msg", ""))} for p in problems]
    summary = "; ".join(f"{_where(p['loc'])}: {p['msg']}" for p in shown[:5])
    return detail(
        status.HTTP_422_UNPROCESSABLE_CONTENT, f"invalid request: {summary}", errors=shown
    )


def _where(loc: Sequence[Any]) -> str:
    parts = [str(part) for part in loc if part != "body"]
    return ".".join(parts) or "body"


async def _task_not_found(request: Request, exc: Exception) -> JSONResponse:
    return detail(status.HTTP_404_NOT_FOUND, f"no task with id {exc.args[0]!r}")


async def _domain(request: Request, exc: Exception) -> JSONResponse:
    code = next(c for kind, c in _STATUS.items() if isinstance(exc, kind))
    return detail(code, str(exc))


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    response = detail(
        status.HTTP_500_INTERNAL_SERVER_ERROR,
        "something went wrong inside DuckLM; the server log has the details",
    )
    # Starlette answers this one outside GuardMiddleware, which sets the header elsewhere.
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
