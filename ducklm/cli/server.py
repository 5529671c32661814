"""`ducklm serve` and `ducklm token` (and `open`, in `browser_login`): commands without DuckLM.

The server's lifespan opens the runtime (and embedded Qdrant locks its folder for one
process), so these run before, and instead of, the CLI's usual `DuckLM.open`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import signal
import sys
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any

from ducklm.cli.browser_login import add_open_command, open_browser
from ducklm.cli.exit_codes import EXIT_USAGE
from ducklm.cli.llama import say
from ducklm.cli.stopping import GRACE_S, Stopping
from ducklm.config.settings import Settings
from ducklm.models.local.autostart import local_server_for
from ducklm.runtime.logs import HIDE_QUERIES
from ducklm.runtime.server_file import remove_server_file, write_server_file
from ducklm.stores import require_database

if TYPE_CHECKING:
    import uvicorn

Standalone = Callable[[Settings, argparse.Namespace], Coroutine[Any, Any, int]]


def add_server_commands(sub: Any) -> None:
    """Add `serve`, `open` and `token` to the `ducklm` parser."""
    serve = sub.add_parser(
        "serve",
        help="serve the web chat and the HTTP API",
        description="Serve the web chat at / and the HTTP API under /v1 (interactive docs "
        "at /docs with DUCK_API_DOCS=1). Prints a one-time login URL for the browser. "
        "Binds 127.0.0.1 by default; another address needs DUCK_API_TOKEN and "
        "DUCK_ALLOWED_HOSTS.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (8000; 0 picks a free one)")
    serve.add_argument("--open", action="store_true", help="log the web browser in once bound")
    serve.set_defaults(standalone_fn=cmd_serve)
    add_open_command(sub)
    token = sub.add_parser("token", help="print the API token clients send as a bearer token")
    token.set_defaults(standalone_fn=cmd_token)


async def cmd_serve(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm serve`."""
    from ducklm.server.hosts import is_loopback  # noqa: PLC0415

    if not is_loopback(args.host) and not settings.api_token:
        print(
            f"ducklm: refusing to serve on {args.host} without DUCK_API_TOKEN: anyone who "
            "can reach that address could run commands here. Set DUCK_API_TOKEN (at "
            "least 16 characters) and DUCK_ALLOWED_HOSTS, or bind 127.0.0.1.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    # A PostgreSQL server that does not answer is a clear refusal here, not a traceback
    # from the app's startup (raises DatabaseUnavailable, which the CLI reports).
    await require_database(settings.database_location)
    # No model server answering and the local extra installed: run the local one meanwhile.
    async with local_server_for(settings, say) as served:
        return await _serve(served, args)


def uvicorn_config(app: Any, settings: Settings, *, host: str, port: int) -> uvicorn.Config:
    """How `ducklm serve` runs the app under uvicorn."""
    from ducklm.server.connection import DoorConfig  # noqa: PLC0415  only the server needs it

    # uvicorn believes X-Forwarded-* from 127.0.0.1 by default, and every client of a
    # local server is on loopback: only the proxies the person names are believed.
    proxies = settings.trusted_proxies
    config = DoorConfig(  # head and body deadlines: a slow client is cut off
        app,
        header_timeout_s=settings.header_timeout_s,
        body_timeout_s=settings.body_timeout_s,
        host=host,
        port=port,
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies or None,
        timeout_graceful_shutdown=GRACE_S,  # see ducklm/cli/stopping.py
    )
    # After the Config: it configures uvicorn's loggers (a dictConfig keeps their filters).
    for name in ("uvicorn.access", "uvicorn.error"):
        logging.getLogger(name).addFilter(HIDE_QUERIES)  # no token or code in a log line
    return config


async def _serve(settings: Settings, args: argparse.Namespace) -> int:
    import uvicorn  # noqa: PLC0415  only the server needs it

    from ducklm.server import create_app  # noqa: PLC0415

    class Server(uvicorn.Server):
        # uvicorn swaps in its own signal handlers and, after shutting down, raises the
        # signal again against asyncio.run's; that race once ended a Ctrl-C with exit
        # code 0 instead of 130 (CI). The handler is this function's (`Stopping`).
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    app = await asyncio.to_thread(create_app, settings)  # it checks the ui folder on disk
    server = Server(uvicorn_config(app, settings, host=args.host, port=args.port))
    stopping = Stopping(server, app)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping, sig)
    try:
        code = await _serve_until_stopped(server, app, settings, args)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    if stopping.signals:
        # Stopped by a signal: as Ctrl-C, which unwinds through `local_server_for` (it
        # stops the model server it started) and exits 130, as a shell reports it.
        raise KeyboardInterrupt
    return code


async def _serve_until_stopped(
    server: Any, app: Any, settings: Settings, args: argparse.Namespace
) -> int:
    serving = asyncio.create_task(server.serve())
    # Say where the chat is once the socket is bound (with --port 0 only then known).
    while not server.started and not serving.done():  # noqa: ASYNC110  uvicorn has a flag, no event
        await asyncio.sleep(0.05)
    if not server.started:
        await serving
        return 1
    # What the started server holds lives as long as it: the full collections that come
    # every twenty turns or so need not scan it again (each paused the loop for 180-220 ms).
    gc.freeze()
    port = server.servers[0].sockets[0].getsockname()[1]
    base = f"http://{browse_host(args.host)}:{port}"
    running = await write_server_file(settings.data_dir, base)
    try:
        login = f"{base}/login?code={app.state.logins.new_code()}"
        print(f"ducklm: web chat at {base}/", file=sys.stderr)
        print(
            f"ducklm: log the browser in at {login} (works once, within 10 minutes; "
            "`ducklm open` makes another)",
            file=sys.stderr,
            flush=True,
        )
        if args.open:
            await open_browser(login)
        await serving
    finally:
        await remove_server_file(settings.data_dir, running)
    return 0


def browse_host(bind: str) -> str:
    """The host a browser on this machine uses for a server bound to `bind`."""
    if bind in {"", "0.0.0.0"}:  # every address: loopback is one of them
        return "127.0.0.1"
    if bind == "::":
        return "[::1]"
    return f"[{bind}]" if ":" in bind else bind


async def cmd_token(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm token`: the configured token, or the one kept in the data dir."""
    from ducklm.kit.token import load_token  # noqa: PLC0415

    print(await load_token(settings))
    return 0
