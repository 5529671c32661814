"""The real tool lists of the npm MCP servers, live or from the captured fixture.

Tool selection is judged on what real servers list (names, descriptions, schemas as
they are), not on made-up tools. `capture_tool_lists` starts the installed servers of
tests/mcp_servers over stdio and takes their `tools/list`;
`scripts/bench/mcp_tool_selection.py --write-fixture` saves that to `NPM_TOOLS_FIXTURE`,
which unit tests read without starting Node.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from ducklm.mcp.tools import model_schema
from ducklm.tools.mcp_info import METADATA_KEY, McpToolInfo, model_name
from tests.support.mcp_servers import NPM_SERVERS

NPM_TOOLS_FIXTURE = Path(__file__).resolve().parent / "data" / "mcp_npm_tools.json"
# DuckLM's server name for each npm package, as an mcp.json would name them.
PACKAGES = {
    "everything": "server-everything",
    "filesystem": "server-filesystem",
    "memory": "server-memory",
}

ToolLists = dict[str, list[dict[str, Any]]]
"""Server name to its `tools/list` entries (as JSON: name, description, inputSchema...)."""


async def capture_tool_lists(scratch: Path) -> ToolLists:
    """Start each npm server of `PACKAGES` over stdio and take its `tools/list`.

    `scratch` is an empty folder the filesystem server serves and the memory server
    writes its graph into.
    """
    return {name: await _list_tools(package, scratch) for name, package in PACKAGES.items()}


async def _list_tools(package: str, scratch: Path) -> list[dict[str, Any]]:
    # Imported here: only capturing needs the SDK's client.
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    entry = NPM_SERVERS / package / "dist" / "index.js"
    if not await asyncio.to_thread(entry.is_file):
        raise FileNotFoundError(f"{entry} is missing: run scripts/system-deps.sh --test")
    # The filesystem server needs a folder; the memory server a file of its own.
    args = [str(scratch)] if package == "server-filesystem" else []
    env = {"PATH": os.environ.get("PATH", ""), "MEMORY_FILE_PATH": str(scratch / "memory.jsonl")}
    params = StdioServerParameters(command="node", args=[str(entry), *args], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools]


def load_tool_lists(path: Path = NPM_TOOLS_FIXTURE) -> ToolLists:
    """The captured tool lists (blocking: for sync fixtures and scripts)."""
    lists: ToolLists = json.loads(path.read_text(encoding="utf-8"))
    return lists


def as_tools(lists: ToolLists) -> list[BaseTool]:
    """The listed tools as the model would be offered them: `<server>__<tool>`, own schema.

    Built as `ducklm/mcp/tools.py:adapt_tool` builds them (name, description, the server's
    input schema); they cannot be called, which selection never does.
    """
    return [
        StructuredTool(
            name=model_name(server, tool["name"]),
            description=tool.get("description") or f"{tool['name']} (MCP server {server})",
            args_schema=model_schema(tool.get("inputSchema")),
            func=_not_called,
            metadata={METADATA_KEY: _info(server, tool)},
        )
        for server, tools in lists.items()
        for tool in tools
    ]


def _info(server: str, tool: dict[str, Any]) -> McpToolInfo:
    hints = tool.get("annotations") or {}
    return McpToolInfo(
        server=server,
        tool=tool["name"],
        name=model_name(server, tool["name"]),
        description=" ".join((tool.get("description") or "").split()),
        trusted=False,
        annotations={k: v for k, v in hints.items() if k.endswith("Hint") or k == "title"},
    )


def _not_called(**_: Any) -> str:
    raise AssertionError("selection must not call a tool")
