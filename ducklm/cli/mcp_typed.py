"""`ducklm mcp prompts|resources`: what `/server:prompt` and `@server:uri` can name.

Standalone, as `ducklm mcp list` is: the enabled servers start, are asked for their
prompts (with arguments) or resources, and stop. A server that failed is one line on
stderr, and the command exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ducklm.cli.mcp_started import started_servers
from ducklm.config.settings import Settings

if TYPE_CHECKING:
    from ducklm.mcp.server import McpServer


def add_typed_commands(msub: Any) -> None:
    """Register `ducklm mcp prompts` and `ducklm mcp resources` on `msub`."""
    prompts = msub.add_parser("prompts", help="the servers' prompts, as /server:prompt ARGS")
    prompts.add_argument("--json", action="store_true", help="one JSON object per line")
    prompts.set_defaults(standalone_fn=cmd_mcp_prompts)
    resources = msub.add_parser("resources", help="the servers' resources, as @server:uri")
    resources.add_argument("--json", action="store_true", help="one JSON object per line")
    resources.set_defaults(standalone_fn=cmd_mcp_resources)


async def cmd_mcp_prompts(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm mcp prompts`."""
    from ducklm.mcp.prompts import list_prompts  # noqa: PLC0415  the SDK loads with servers

    async def each(server: McpServer) -> list[dict[str, Any]]:
        return [p.wire() for p in await list_prompts(server)]

    return await _print(settings, each, args.json, _prompt_line)


async def cmd_mcp_resources(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm mcp resources`."""
    from ducklm.mcp.mentions import list_resources  # noqa: PLC0415

    async def each(server: McpServer) -> list[dict[str, Any]]:
        name = server.spec.name
        return [
            {"server": name, "mention": f"@{name}:{r['uri']}", **r}
            for r in await list_resources(server)
        ]

    return await _print(settings, each, args.json, _resource_line)


async def _print(settings: Settings, each: Any, as_json: bool, line: Any) -> int:
    from ducklm.mcp.catalog import from_each  # noqa: PLC0415

    servers = await started_servers(settings)
    try:
        found, problems = await from_each(servers, each)
    finally:
        await servers.aclose()
    for row in found:
        print(json.dumps(row) if as_json else line(row))
    for _, why in problems:
        print(f"ducklm: {why}", file=sys.stderr)
    return 1 if problems else 0


def _prompt_line(row: dict[str, Any]) -> str:
    shown = [a["name"] + ("" if a["required"] else "?") for a in row["arguments"]]
    head = " ".join([row["command"], *shown])
    return f"{head:<48} {row['description']}".rstrip()


def _resource_line(row: dict[str, Any]) -> str:
    about = f" ({row['mime_type']})" if row["mime_type"] else ""
    return f"{row['mention']:<48} {row['name']}{about}  {row['description']}".rstrip()
