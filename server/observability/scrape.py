"""`GET /metrics`: the runs' numbers in Prometheus' text format, behind the API token.

The gauges that describe a state rather than count events (questions waiting, the
queue, MCP servers) are read when scraped, so they are right after a restart too.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ducklm.server.deps import Duck
from ducklm.server.observability.metrics import RunMetrics

router = APIRouter()


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request, duck: Duck) -> Response:
    """The server's metrics; `questions_waiting` counts every process on the database."""
    found: RunMetrics = request.app.state.metrics
    door = getattr(request.app.state, "agent_protocol", None)  # absent in apps without it
    found.set_state(
        waiting=await duck.waiting_count(),
        queued=await door.queue.depth() if door is not None else 0,
        mcp=[(server.spec.name, server.state) for server in duck.context.mcp.servers],
    )
    # Rendering a few dozen series is microseconds: no thread needed.
    return Response(generate_latest(found.registry), media_type=CONTENT_TYPE_LATEST)
