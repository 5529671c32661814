"""Every configured MCP server of a process, and the tools they offer right now.

Servers start when the first turn needs them (a CLI command that never chats starts
none), stay open while the process runs, and a dead one starts again at the start of
the next turn. A server that fails is a non-fatal error of that turn: the turn goes on
without its tools.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from langchain_core.tools import BaseTool

from ducklm.config.settings import Settings
from ducklm.mcp.config import ServerSpec, load_mcp_config
from ducklm.mcp.connect import Connections
from ducklm.mcp.server import McpServer
from ducklm.tools.mcp_info import McpToolInfo, mcp_info

DOWN = "MCP server {name!r} is down: {why}"


@dataclass(frozen=True)
class ServerProblem:
    """A server that is not running, and why."""

    server: str
    message: str


class McpServers:
    """The configured servers (enabled ones only) by name."""

    def __init__(self, servers: Iterable[McpServer] = ()) -> None:
        self._servers = {s.spec.name: s for s in servers}
        self.connections = Connections(self._servers)
        """The sign-ins a person started from the web chat (`connect.py`)."""

    @classmethod
    def empty(cls) -> McpServers:
        """No servers: the tools are DuckLM's own."""
        return cls()

    @property
    def servers(self) -> list[McpServer]:
        """The servers, in the file's order."""
        return list(self._servers.values())

    async def ensure(self, names: Iterable[str] | None = None) -> list[ServerProblem]:
        """Start (or restart) the servers named (all by default); the ones that failed."""
        chosen = [self._servers[n] for n in names or self._servers if n in self._servers]
        await asyncio.gather(*(s.ensure() for s in chosen))
        return [ServerProblem(s.spec.name, s.error or "") for s in chosen if s.session is None]

    def tools(self) -> list[BaseTool]:
        """The tools of the running servers."""
        return [t for s in self._servers.values() if s.session is not None for t in s.tools]

    def tool(self, name: str) -> BaseTool | None:
        """The running tool the model calls `name`, or `None`."""
        return next((t for t in self.tools() if t.name == name), None)

    def down_reason(self, tool_name: str) -> str | None:
        """Why `<server>__<tool>` cannot run when its server is configured but down."""
        server = self._servers.get(self.server_of(tool_name) or "")
        if server is None or server.session is not None:
            return None
        return DOWN.format(name=server.spec.name, why=server.error or server.state)

    def infos(self) -> list[McpToolInfo]:
        """What DuckLM knows of each running tool."""
        return [i for i in (mcp_info(t) for t in self.tools()) if i is not None]

    def server_of(self, tool_name: str) -> str | None:
        """The configured server a model-facing name `<server>__<tool>` belongs to."""
        server = tool_name.split("__", 1)[0]
        return server if "__" in tool_name and server in self._servers else None

    async def aclose(self) -> None:
        """Stop every server (and end the sign-ins under way)."""
        await self.connections.aclose()
        await asyncio.gather(*(s.stop() for s in self._servers.values()))


def build_servers(specs: Iterable[ServerSpec], settings: Settings) -> McpServers:
    """A server object (not started) for each enabled spec."""
    return McpServers(
        McpServer(
            spec,
            workspace=settings.workspace,
            log_dir=settings.files.mcp_logs,
            timeout_s=settings.mcp_timeout_s,
        )
        for spec in specs
        if spec.active
    )


@asynccontextmanager
async def open_mcp(settings: Settings) -> AsyncIterator[McpServers]:
    """The servers of `settings.mcp_config_path`, stopped when the block ends.

    Raises:
        McpConfigError: The file is not valid; the message names the server and field.
    """
    specs = await asyncio.to_thread(load_mcp_config, settings.mcp_config_path)
    servers = build_servers(specs, settings)
    try:
        yield servers
    finally:
        await servers.aclose()
