"""Thin routes: validate, call the runtime or the task hub, shape the answer."""

from __future__ import annotations

from fastapi import APIRouter

from ducklm.server.routes import (
    approvals,
    chat,
    conversations,
    learning,
    memory,
    models,
    status,
    tasks,
)


def api_routers() -> list[APIRouter]:
    """The routers mounted under `/v1`, behind the token."""
    return [
        chat.router,
        tasks.router,
        conversations.router,
        approvals.router,
        learning.router,
        memory.router,
        models.router,
        status.router,
    ]


def open_routers() -> list[APIRouter]:
    """Routes that need no token."""
    return [status.health_router]
