"""`ducklm serve` and `ducklm token`: commands that do not open DuckLM themselves.

The server's lifespan opens the runtime (and embedded Qdrant locks its folder for one
process), so these run before, and instead of, the CLI's usual `DuckLM.open`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from ducklm.cli_llama import say
from ducklm.local_model import local_server_for
from ducklm.settings import Settings
from ducklm.stores import require_database

Standalone = Callable[[Settings, argparse.Namespace], Coroutine[Any, Any, int]]
EXIT_USAGE = 2


def add_server_commands(sub: Any) -> None:
    """Add `serve` and `token` to the `ducklm` parser."""
    serve = sub.add_parser(
        "serve",
        help="serve the web chat and the HTTP API",
        description="Serve the web chat at / and the HTTP API under /v1 (docs at /docs). "
        "Binds 127.0.0.1 by default; another address needs DUCK_API_TOKEN and "
        "DUCK_ALLOWED_HOSTS.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (8000; 0 picks a free one)")
    serve.set_defaults(standalone_fn=cmd_serve)
    token = sub.add_parser("token", help="print the API token clients send as a bearer token")
    token.set_defaults(standalone_fn=cmd_token)


async def cmd_serve(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm serve`."""
    from ducklm.server.security import is_loopback  # noqa: PLC0415

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


async def _serve(settings: Settings, args: argparse.Namespace) -> int:
    import uvicorn  # noqa: PLC0415  only the server needs it

    from ducklm.server import create_app  # noqa: PLC0415

    app = await asyncio.to_thread(create_app, settings)  # it checks the ui folder on disk
    server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port))
    serving = asyncio.create_task(server.serve())
    # Say where the chat is once the socket is bound (with --port 0 only then known).
    while not server.started and not serving.done():  # noqa: ASYNC110  uvicorn has a flag, no event
        await asyncio.sleep(0.05)
    if server.started:
        port = server.servers[0].sockets[0].getsockname()[1]
        shown = f"[{args.host}]" if ":" in args.host else args.host
        print(f"ducklm: web chat at http://{shown}:{port}/", file=sys.stderr, flush=True)
    await serving
    return 0 if server.started else 1


async def cmd_token(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm token`: the configured token, or the one kept in the data dir."""
    from ducklm.server.token import load_token  # noqa: PLC0415

    print(await load_token(settings))
    return 0
