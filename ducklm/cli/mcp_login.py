"""`ducklm mcp login NAME` and `ducklm mcp logout NAME`: a person authorizes DuckLM at a server.

`login` connects to the server as a turn would, with a person at hand: when the server
asks for OAuth, the authorization URL is printed (and opened in a browser when the
machine has a display, unless `--no-browser`), and the browser's redirect comes back to
a one-shot listener on 127.0.0.1 (`ducklm.mcp.oauth.loopback`). The tokens and the
client registration go to `<data dir>/mcp/oauth/NAME.json` (0600); later turns use
them and refresh them, with nobody asked. A login starts afresh: the server's old
tokens and registration are forgotten first (the new listener's port is a new
redirect URI). Non-interactive (tests, scripts): `--no-browser`, read the URL from the
first line that starts with `http`, and fetch it following redirects.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import webbrowser
from typing import TYPE_CHECKING, Any

from ducklm.config.settings import Settings
from ducklm.mcp.config import ServerSpec, load_mcp_config

if TYPE_CHECKING:
    from ducklm.mcp.server import McpServer

NO_SUCH_SERVER = "no MCP server named {name!r} in {path}"
NOT_HTTP = "MCP server {name!r} is a stdio server: OAuth is for 'url' servers"
OPEN_THIS = "To authorize DuckLM at MCP server {name!r}, open:"
SIGNED_IN = "[ok  ] {name}: authorized, {count} tools; token stored in {path}"
NOT_NEEDED = "[ok  ] {name}: connected, {count} tools; it asked for no authorization"
LOGGED_OUT = "{name}: forgot its tokens ({path})"
NOTHING_STORED = "{name}: no tokens were stored"
# The person's time to sign in, on top of the server's own start.
SIGN_IN_S = 300.0


def add_login_commands(msub: Any) -> None:
    """Register `login` and `logout` on the `ducklm mcp` subparsers."""
    login = msub.add_parser("login", help="authorize DuckLM at an MCP server behind OAuth")
    login.add_argument("name", help="the server's name in mcp.json")
    login.add_argument("--no-browser", action="store_true", help="print the URL only")
    login.set_defaults(standalone_fn=cmd_mcp_login)
    logout = msub.add_parser("logout", help="forget an MCP server's OAuth tokens")
    logout.add_argument("name", help="the server's name in mcp.json")
    logout.set_defaults(standalone_fn=cmd_mcp_logout)


async def cmd_mcp_login(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm mcp login NAME`."""
    from ducklm.mcp.connect import forget_sign_in  # noqa: PLC0415  loaded when used, as below

    server = await _server(settings, args.name, browser=not args.no_browser)
    await forget_sign_in(server)
    await server.ensure()
    try:
        if server.session is None:
            print(f"[FAIL] {server.error}")
            return 1
        stored = await asyncio.to_thread(server.token_path.is_file)
        line = SIGNED_IN if stored else NOT_NEEDED
        print(line.format(name=args.name, count=len(server.tools), path=server.token_path))
        return 0
    finally:
        await server.stop()


async def cmd_mcp_logout(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm mcp logout NAME`."""
    from ducklm.mcp.connect import forget_sign_in  # noqa: PLC0415  loaded when used, as below

    server = await _server(settings, args.name, browser=False)
    forgot = await forget_sign_in(server)
    line = LOGGED_OUT if forgot else NOTHING_STORED
    print(line.format(name=args.name, path=server.token_path))
    return 0


async def _server(settings: Settings, name: str, *, browser: bool) -> McpServer:
    # The session needs LangChain and the MCP SDK: loaded here, not when the CLI starts.
    from ducklm.mcp.server import McpServer  # noqa: PLC0415

    path = settings.mcp_config_path
    specs = {s.name: s for s in await asyncio.to_thread(load_mcp_config, path)}
    spec = specs.get(name)
    if spec is None:
        raise LookupError(NO_SUCH_SERVER.format(name=name, path=path))
    if spec.transport != "http":
        raise LookupError(NOT_HTTP.format(name=name))
    return McpServer(
        _with_time_to_sign_in(spec),
        workspace=settings.workspace,
        log_dir=settings.files.mcp_logs,
        timeout_s=settings.mcp_timeout_s,
        person=_shower(name, browser=browser),
    )


def _with_time_to_sign_in(spec: ServerSpec) -> ServerSpec:
    return spec.model_copy(update={"start_timeout_s": spec.start_timeout_s + SIGN_IN_S})


def _shower(name: str, *, browser: bool) -> Any:
    async def show(url: str) -> None:
        print(OPEN_THIS.format(name=name), url, sep="\n", flush=True)
        if browser and _has_display():
            await asyncio.to_thread(webbrowser.open, url)

    return show


def _has_display() -> bool:
    # Without a display `webbrowser` may start a console browser in this terminal.
    return sys.platform == "darwin" or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )
