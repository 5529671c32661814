"""A streamable-HTTP server's transport, with its OAuth when it is behind one.

Imported only when such a server starts (the SDK and its OAuth providers). The person
who may sign in (`person`, `ducklm mcp login`) gets a loopback listener for the
redirect (the web chat's Connect brings a `SignIn` with its own), open as long as the
session, since a call may need more scopes later (step-up); in a turn nobody is at a
terminal: the server's 401 reads as "run `ducklm mcp login NAME`"
(`errors.authorization_words`), and a step-up is asked of the person through the call
in flight (`oauth/asked.py`).
The SDK's transport turns an HTTP error into a JSON-RPC error without its status, so
the client's response hook keeps the last 401 or 403 (`Refusals`) and a session that
ends on one is ended with `RefusedByServer`, whose `response` carries the status.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from ducklm.mcp.asks import CallAsks
from ducklm.mcp.config import ServerSpec
from ducklm.mcp.oauth.person import Show, SignIn, sign_in
from ducklm.mcp.oauth.provider import server_auth
from ducklm.mcp.oauth.reach import ReachGuard
from ducklm.mcp.oauth.storage import FileTokenStorage


@contextlib.asynccontextmanager
async def open_http(
    spec: ServerSpec,
    token_path: Path,
    person: Show | SignIn | None,
    asking: Callable[[], list[CallAsks]] | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """The read and write streams of `spec` (its `${VAR}` filled already).

    `person`: who may sign in. A `Show` gets a loopback listener for the redirect; a
    `SignIn` comes with its own (`ducklm/mcp/connect.py`, the web chat's Connect).
    `asking`: in a turn, the calls in flight, whose person is asked to sign in again when
    the server wants more access (`oauth/asked.py`).
    """
    storage = FileTokenStorage(token_path, spec.url or "")
    async with contextlib.AsyncExitStack() as stack:
        signing: SignIn | None = None
        if isinstance(person, SignIn):  # its redirect arrives elsewhere (the web chat's route)
            signing = person
        elif person is not None and (spec.oauth is None or spec.oauth.needs_person):
            port = spec.oauth.callback_port if spec.oauth is not None else None
            signing = await stack.enter_async_context(sign_in(person, port=port))
        auth = await server_auth(spec, storage, signing, asking if person is None else None)
        # Made in a thread: an httpx client loads the CA bundle from disk.
        client = await asyncio.to_thread(
            create_mcp_http_client, dict(spec.headers) or None, None, auth
        )
        # Every request, its OAuth discovery and redirects too, goes where the person
        # pointed: never to a host the server alone names (`oauth/reach.py`).
        client.event_hooks["request"].append(ReachGuard(spec))
        refusals = Refusals()
        client.event_hooks["response"].append(refusals.hear)
        await stack.enter_async_context(client)
        read, write = await stack.enter_async_context(
            streamable_http_client(spec.url or "", http_client=client)
        )
        try:
            yield read, write
        except Exception as exc:
            if refusals.response is None:
                raise
            raise RefusedByServer(refusals.response) from exc


class RefusedByServer(Exception):
    """The server refused DuckLM's credentials (HTTP 401 or 403) and the session ended."""

    def __init__(self, response: httpx2.Response) -> None:
        super().__init__(f"HTTP {response.status_code} from the server")
        self.response = response
        """Read by `errors.refused_status`, as an httpx status error's is."""


class Refusals:
    """The last 401 or 403 the server answered (a success forgets it)."""

    def __init__(self) -> None:
        self.response: httpx2.Response | None = None

    async def hear(self, response: httpx2.Response) -> None:
        """The client's response hook."""
        if response.status_code in (401, 403):
            self.response = response
        elif response.is_success:
            self.response = None
