"""`GET /health` (no token) and `GET /v1/status`."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from fastapi import APIRouter

from ducklm.server.deps import Duck, Hub
from ducklm.server.routes.models import ping

router = APIRouter(tags=["status"])
health_router = APIRouter(tags=["status"])


@health_router.get("/health")
async def health(duck: Duck) -> dict[str, Any]:
    """Whether DuckLM is up, and whether its model servers answer (nothing secret)."""
    servers = await ping(duck)
    return {
        "status": "ok" if all(s["ok"] for s in servers) else "degraded",
        "checks": {"model_servers": servers},
    }


@router.get("/status")
async def status(duck: Duck, hub: Hub) -> dict[str, Any]:
    """What this server is and what it is doing."""
    return {
        "version": VERSION,
        "data_dir": str(duck.settings.data_dir),
        "workspace": str(duck.settings.workspace),
        "running_tasks": hub.running(),
        "conversations": len(await duck.conversations.list(limit=100_000)),
        "sandbox": duck.context.protection,
    }


def package_version() -> str:
    """DuckLM's installed version ("0" when run from a tree that is not installed)."""
    try:
        return version("ducklm")
    except PackageNotFoundError:
        return "0"


# Read once at import: finding package metadata touches the disk.
VERSION = package_version()
