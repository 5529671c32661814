"""The enabled MCP servers of mcp.json, started for one standalone `ducklm mcp` command.

Shared by `mcp.py` (list, tools, check) and `mcp_typed.py` (prompts, resources), which
both import it and not each other.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ducklm.config.settings import Settings
from ducklm.mcp.config import load_mcp_config

if TYPE_CHECKING:
    from ducklm.mcp.servers import McpServers


async def started_servers(settings: Settings) -> McpServers:
    """The enabled servers, started (the caller stops them)."""
    # The sessions need LangChain and the MCP SDK: loaded here, not when the CLI starts.
    from ducklm.mcp.servers import build_servers  # noqa: PLC0415

    specs = await asyncio.to_thread(load_mcp_config, settings.mcp_config_path)
    # stdio servers run in the workspace unless the config names a folder.
    await asyncio.to_thread(settings.workspace.mkdir, parents=True, exist_ok=True)
    servers = build_servers(specs, settings)
    await servers.ensure()
    return servers
