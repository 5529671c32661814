"""`GET /v1/mcp/servers`: the MCP servers of this server's process, for the activity drawer."""

from __future__ import annotations

from fastapi import APIRouter

from ducklm.server.deps import Duck
from ducklm.server.responses import McpServersView, McpServerView

router = APIRouter(tags=["mcp"])


@router.get("/mcp/servers")
async def mcp_servers(duck: Duck) -> McpServersView:
    """Each enabled server as this process holds it (`stopped` until a turn starts it)."""
    return McpServersView(
        servers=[
            McpServerView(
                name=server.spec.name,
                transport=server.spec.transport,
                trust=server.spec.trust,
                state=server.state,
                tools=len(server.tools),
                error=server.error,
            )
            for server in duck.context.mcp.servers
        ]
    )
