"""DuckLM as an MCP server: a door other agents (Claude Code, Goose) call as a tool.

The same MCP server runs behind two transports: the streamable-HTTP `/mcp` endpoint of
`ducklm serve` (`http.py`, behind the API token and the Host rules) and `ducklm mcp
serve` on stdio (`ducklm/cli/mcp_serve.py`). It is an adapter over the one run service:
turns go through the server's `TaskHub` and so through `DuckLM`, as `/v1/chat` does.
"""

from ducklm.server.mcp_server.door import McpDoor, Questions
from ducklm.server.mcp_server.server import build_server

__all__ = ["McpDoor", "Questions", "build_server"]
