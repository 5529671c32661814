"""`ducklm mcp list|tools|check|login|logout`: the MCP servers of mcp.json and their tools.

Standalone commands: they start the enabled servers themselves (a running `ducklm
serve` keeps its own sessions), ask each for its tools, and stop them again; nothing
else of DuckLM opens. `check` exits 1 when a server failed to start. `ducklm mcp serve`
(DuckLM itself as an MCP server) is `mcp_serve.py`; `login` and `logout` (OAuth) are
`mcp_login.py`; `prompts` and `resources` are `mcp_typed.py`; both kinds start the
servers through `mcp_started.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from ducklm.cli.mcp_login import add_login_commands
from ducklm.cli.mcp_serve import cmd_mcp_serve
from ducklm.cli.mcp_started import started_servers
from ducklm.cli.mcp_typed import add_typed_commands
from ducklm.config.settings import Settings
from ducklm.mcp.config import load_mcp_config

NO_SERVERS = "no MCP servers in {path}"


def add_mcp_commands(sub: Any) -> None:
    """Register `ducklm mcp` and its subcommands on `sub`."""
    mcp = sub.add_parser("mcp", help="the MCP servers of mcp.json and their tools")
    msub = mcp.add_subparsers(dest="mcp_command", required=True)
    listing = msub.add_parser(
        "list", help="servers, their state, the MCP revision agreed and how many tools"
    )
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(standalone_fn=cmd_mcp_list)
    tools = msub.add_parser("tools", help="every tool as the model sees it")
    tools.add_argument("--json", action="store_true", help="one JSON object per line")
    tools.set_defaults(standalone_fn=cmd_mcp_tools)
    check = msub.add_parser("check", help="start each server, list its tools, report errors")
    check.set_defaults(standalone_fn=cmd_mcp_check)
    serve = msub.add_parser(
        "serve", help="serve DuckLM itself to other agents as an MCP server on stdio"
    )
    serve.set_defaults(standalone_fn=cmd_mcp_serve)
    add_login_commands(msub)
    add_typed_commands(msub)


async def cmd_mcp_list(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm mcp list`."""
    specs = await asyncio.to_thread(load_mcp_config, settings.mcp_config_path)
    servers = await started_servers(settings)
    try:
        running = {s.spec.name: s for s in servers.servers}
        for spec in specs:
            server = running.get(spec.name)
            row = {
                "name": spec.name,
                "transport": spec.transport,
                "trust": spec.trust,
                "state": server.state if server is not None else "disabled",
                "tools": len(server.tools) if server is not None else 0,
                "revision": server.revision if server is not None else None,
                "error": server.error if server is not None else None,
            }
            if args.json:
                print(json.dumps(row))
            else:
                print(_row(row))
        if not specs and not args.json:
            print(NO_SERVERS.format(path=settings.mcp_config_path))
    finally:
        await servers.aclose()
    return 0


async def cmd_mcp_tools(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm mcp tools`."""
    from ducklm.tools.mcp_info import mcp_info  # noqa: PLC0415  LangChain loads only for mcp

    servers = await started_servers(settings)
    try:
        for tool in servers.tools():
            info = mcp_info(tool)
            assert info is not None  # every tool of a server carries its facts
            if args.json:
                print(json.dumps(info.as_json()))
            else:
                hints = ", ".join(k for k, v in info.annotations.items() if v is True)
                print(f"{info.name:<40} {info.description[:70]}" + (f"  [{hints}]" * bool(hints)))
    finally:
        await servers.aclose()
    return 0


async def cmd_mcp_check(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm mcp check`."""
    servers = await started_servers(settings)
    try:
        for server in servers.servers:
            if server.session is None:
                print(f"[FAIL] {server.spec.name}: {server.error}")
            else:
                names = ", ".join(t.name for t in server.tools) or "no tools"
                line = f"{server.spec.name}: MCP {server.revision}, {len(server.tools)} tools"
                print(f"[ok  ] {line} ({names})")
        if not servers.servers:
            print(NO_SERVERS.format(path=settings.mcp_config_path))
        return 1 if any(s.session is None for s in servers.servers) else 0
    finally:
        await servers.aclose()


def _row(row: dict[str, Any]) -> str:
    line = f"{row['name']:<16} {row['transport']:<6} {row['trust']:<10} {row['state']:<9}"
    line += f" {row['revision'] or '-':<10} {row['tools']:>3} tools"
    return line + (f"  ({row['error']})" if row["error"] else "")
