"""`GET /health` (no token) and `GET /v1/status`."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from fastapi import APIRouter

from ducklm.server.deps import Duck, Hub
from ducklm.server.responses import Health, HealthChecks, StatusView, errors
from ducklm.server.routes.models import ping

router = APIRouter(tags=["status"])
# No token here; only the Host check and the size cap can refuse it.
health_router = APIRouter(tags=["status"], responses=errors(400, 413))


@health_router.get("/health")
async def health(duck: Duck) -> Health:
    """Whether DuckLM is up, whether its model servers answer, and the embedding model."""
    servers = await ping(duck)
    embeddings = duck.context.embeddings.state
    healthy = all(s.ok for s in servers) and not embeddings.startswith("failed")
    return Health(
        status="ok" if healthy else "degraded",
        checks=HealthChecks(model_servers=servers, embeddings=embeddings),
    )


@router.get("/status")
async def status(duck: Duck, hub: Hub) -> StatusView:
    """What this server is and what it is doing."""
    settings = duck.settings
    return StatusView(
        version=VERSION,
        data_dir=str(settings.data_dir),
        workspace=str(settings.workspace),
        workspaces=[str(path) for path in settings.workspaces],
        running_tasks=hub.running(),
        conversations=len(await duck.conversations.list(limit=100_000)),
        sandbox=duck.context.protection,
    )


def package_version() -> str:
    """DuckLM's installed version ("0" when run from a tree that is not installed)."""
    try:
        return version("ducklm")
    except PackageNotFoundError:
        return "0"


# Read once at import: finding package metadata touches the disk.
VERSION = package_version()
