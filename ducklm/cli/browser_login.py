"""`ducklm open [THREAD] [--revoke-all]`: log the web browser in, or every browser out.

A login URL comes from the running server (`POST /v1/login-codes`, bearer token only);
with THREAD it lands on that conversation. `--revoke-all` ends every browser session:
through the server when one runs (it holds them in memory too), else in the data dir's
sessions file (`ducklm.stores.browser_sessions`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from ducklm.cli.exit_codes import EXIT_USAGE
from ducklm.config.settings import Settings
from ducklm.runtime.server_file import read_server_file

NO_SERVER = "ducklm: no server is running on {data_dir}: start one with `ducklm serve --open`"


def add_open_command(sub: Any) -> None:
    """Register `open` on `sub`."""
    opener = sub.add_parser(
        "open",
        help="log the web browser in to the running server (prints a fresh login URL)",
        description="Print a one-time login URL of the running server and open it in the "
        "web browser; with THREAD it lands on that conversation. A browser stays logged in "
        "across server restarts until its session ends (7 days), it logs out, or "
        "--revoke-all.",
    )
    opener.add_argument("thread", nargs="?", help="a conversation id to open")
    opener.add_argument("--no-browser", action="store_true", help="only print the URL")
    opener.add_argument(
        "--revoke-all", action="store_true", help="log every browser out (no URL is made)"
    )
    opener.set_defaults(standalone_fn=cmd_open)


async def open_browser(url: str) -> None:
    """Open `url` in the person's web browser (`BROWSER` chooses it), off the loop."""
    import webbrowser  # noqa: PLC0415  only these commands need it

    # It may start a browser process and wait for it: never on the event loop.
    if not await asyncio.to_thread(webbrowser.open, url):
        print("ducklm: found no web browser: open the URL yourself", file=sys.stderr)


async def cmd_open(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm open`: a fresh login URL from the running server, opened in the browser."""
    if args.revoke_all:
        return await _revoke_all(settings)
    from ducklm.kit.token import load_token  # noqa: PLC0415

    running = await read_server_file(settings.data_dir)
    token = await load_token(settings, create=False)
    if running is None or token is None:
        print(NO_SERVER.format(data_dir=settings.data_dir), file=sys.stderr)
        return EXIT_USAGE
    url = await _login_url(running.url, token, args.thread)
    if url is None:
        return 1
    print(url, flush=True)
    if not args.no_browser:
        await open_browser(url)
    return 0


async def _login_url(base: str, token: str, thread: str | None) -> str | None:
    """A login URL from the server at `base`, or `None` (said why on stderr)."""
    import httpx  # noqa: PLC0415  only this command needs it

    params = {"thread": thread} if thread else None
    # trust_env off: the bearer token goes to this server, never to a configured proxy.
    client = await asyncio.to_thread(httpx.AsyncClient, base_url=base, trust_env=False)
    async with client:
        try:
            response = await client.post(
                "/v1/login-codes",
                params=params,
                headers={"Authorization": f"Bearer {token}"},
                timeout=10,
            )
        except httpx.TransportError:
            print(f"ducklm: the server at {base} does not answer: is it running?", file=sys.stderr)
            return None
    if response.status_code == 404:
        print(f"ducklm: {response.json()['detail']}", file=sys.stderr)
        return None
    if response.status_code != 201:
        print(
            f"ducklm: the server at {base} refused a login code ({response.status_code}): "
            "does it use the same DUCK_API_TOKEN (or data dir) as this command?",
            file=sys.stderr,
        )
        return None
    url: str = response.json()["url"]
    return url


async def _revoke_all(settings: Settings) -> int:
    """End every browser session: the server's when one runs, else the kept file's."""
    from ducklm.cli.remote_client import connect  # noqa: PLC0415

    async with connect(settings) as server:
        if server is not None:
            answer = await server.call("DELETE", "/v1/browser-sessions")
            revoked = int(answer["revoked"])
        else:
            revoked = await asyncio.to_thread(_clear_file, settings)
    print(f"logged out {revoked} browser session(s); `ducklm open` logs this one in again")
    return 0


def _clear_file(settings: Settings) -> int:
    """Empty the kept sessions file; how many live sessions it held."""
    from ducklm.stores.browser_sessions import read_sessions, write_sessions  # noqa: PLC0415

    path = settings.files.browser_sessions
    now = time.time()
    held = sum(expires > now for expires in read_sessions(path).values())
    write_sessions(path, {})
    return held
