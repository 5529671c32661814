"""`GET /health` (no token) and `GET /v1/status`."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from fastapi import APIRouter

from ducklm.models.local.state import LOCAL_SERVERS
from ducklm.server.deps import Duck, Hub
from ducklm.server.responses import Health, HealthChecks, ServerCheck, StatusView, errors
from ducklm.server.routes.models import ping

router = APIRouter(tags=["status"])
# No token here; only the Host check and the size cap can refuse it.
health_router = APIRouter(tags=["status"], responses=errors(400, 413))


@health_router.get("/health")
async def health(duck: Duck) -> Health:
    """Whether DuckLM is up, whether its model servers answer, and the embedding model.

    The local model server that DuckLM restarts after a crash shows as `restarting`.
    """
    servers = [kept_state(check) for check in await ping(duck)]
    embeddings = duck.context.embeddings.state
    healthy = all(s.ok for s in servers) and not embeddings.startswith("failed")
    return Health(
        status="ok" if healthy else "degraded",
        checks=HealthChecks(model_servers=servers, embeddings=embeddings),
    )


def kept_state(check: ServerCheck) -> ServerCheck:
    """`check`, saying so when its server is the local one DuckLM restarts or gave up on.

    A server that does not answer while DuckLM restarts it is `restarting: it crashed
    (...)`, with no command to run (the plain fix would say to start it).
    """
    watch = LOCAL_SERVERS.find(check.base_url)
    if check.ok or watch is None or watch.state.status == "up":
        return check
    state = watch.state
    fix = "" if state.status == "restarting" else check.fix
    if state.ending is not None and state.ending.crashed and state.status == "down":
        fix = state.ending.advice()
    return check.model_copy(update={"detail": state.describe(), "fix": fix})


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
