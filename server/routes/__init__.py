"""Thin routes: validate, call the runtime or the task hub, shape the answer."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from ducklm.server.deps import known_query_values
from ducklm.server.responses import GUARDED, errors
from ducklm.server.routes import (
    approvals,
    branches,
    chat,
    conversation_model,
    conversations,
    exports,
    files,
    learning,
    mcp,
    mcp_connect,
    mcp_media,
    memory,
    models,
    review,
    search,
    status,
    tasks,
    undo,
)


def api_routers() -> list[APIRouter]:
    """The routers mounted under `/v1`, behind the token (one router holding them all)."""
    # What every route may answer (the token, Host/Origin and size checks, bad JSON) and
    # what every route refuses (unknown or repeated query parameters) are said once, here.
    guarded = APIRouter(responses=errors(*GUARDED), dependencies=[Depends(known_query_values)])
    for module in (
        chat,
        tasks,
        conversations,
        branches,
        conversation_model,
        exports,
        files,
        search,
        undo,
        review,
        approvals,
        learning,
        memory,
        models,
        status,
        mcp,
        mcp_connect,
        mcp_media,
    ):
        guarded.include_router(module.router)
    return [guarded]


def open_routers() -> list[APIRouter]:
    """Routes that need no token (the OAuth callback's one-time state stands for it)."""
    return [status.health_router, mcp_connect.callback_router()]
