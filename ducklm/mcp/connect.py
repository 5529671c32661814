"""A person connects an MCP server from the web chat; DuckLM's own server takes the redirect.

`POST /v1/mcp/servers/{name}/connect` calls `Connections.start`: the server's old tokens
and registration are forgotten (as `ducklm mcp login` does: the redirect URI changes),
and the one sign-in flow (`oauth/person.py:SignIn`) runs on a copy of the server
(`McpServer.for_person`) in a task of its own. Its `show` hands the authorization URL to
the route, and its listener is a `RelayedCallback` that `GET /v1/mcp/oauth/callback`
feeds (`finish`) instead of a loopback listener. That route cannot carry the token (the
authorization server's redirect reaches it), so the `state` alone authorizes it: the SDK
makes it unguessable (32 random bytes), and here it is bound to one server, taken once,
and refused after `TTL_S`. After the sign-in the copy stops and the server itself starts
again at once with the stored tokens, so its tools are there for the next turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ducklm.mcp.errors import NEEDS_LOGIN
from ducklm.mcp.oauth.loopback import REFUSED, AuthorizationRefused, Redirected
from ducklm.mcp.oauth.person import SignIn
from ducklm.mcp.server import McpServer

TTL_S = 300.0
"""How long a sign-in's `state` is taken: the person's time to sign in."""
CALLBACK_PATH = "/v1/mcp/oauth/callback"
NO_SUCH_SERVER = "no enabled MCP server named {name!r}"
NOT_FOR_PERSON = "MCP server {name!r} is not one a person signs in to: {why}"
STDIO = "it is a stdio server"
MACHINE = "it uses the client_credentials grant"
OWN_TOKEN = "mcp.json gives it an Authorization header"
NO_URL = "it gave no authorization URL within {s:.0f} s"
NO_END = "the sign-in did not end within {s:.0f} s"
NO_CODE = "the redirect carried no code"
UNKNOWN_STATE = (
    "This sign-in is unknown, expired or already used. Press Connect in DuckLM to start again."
)
CONNECTED = "DuckLM is connected to MCP server {name!r} ({count} tools). You can close this tab."
NOT_CONNECTED = "DuckLM could not connect to MCP server {name!r}: {why}"

Ending = Literal["connected", "failed", "unknown"]


class CannotConnect(ValueError):
    """The server is not one a person signs in to (stdio, machine grant, own token)."""


class ConnectFailed(Exception):
    """The sign-in could not start: discovery, registration or the server failed."""


@dataclass(frozen=True)
class Outcome:
    """How a redirect back to DuckLM ended, in words for the person's browser tab."""

    ending: Ending
    text: str


class RelayedCallback:
    """A `SignIn` listener whose redirect arrives at DuckLM's own server (`finish`)."""

    def __init__(self, redirect_uri: str) -> None:
        self._uri = redirect_uri
        self.state: str | None = None
        self._result: asyncio.Future[Redirected] = asyncio.get_running_loop().create_future()
        # A refusal nobody waits for any more (the sign-in ended) is not an error to log.
        self._result.add_done_callback(lambda f: f.cancelled() or f.exception())

    @property
    def redirect_uri(self) -> str:
        """DuckLM's callback URL on the host the person's browser used."""
        return self._uri

    def expect(self, state: str) -> None:
        """Remember the `state` the authorization URL carries."""
        self.state = state

    async def wait(self, timeout_s: float) -> Redirected:
        """The code, state and issuer `deliver` was given (`TimeoutError` after `timeout_s`)."""
        return await asyncio.wait_for(asyncio.shield(self._result), timeout=timeout_s)

    def deliver(self, code: str, iss: str | None = None) -> None:
        """The redirect brought `code` (and `iss`, when it named one) with the awaited state."""
        if not self._result.done() and self.state is not None:
            self._result.set_result((code, self.state, iss))

    def refuse(self, why: str) -> None:
        """The redirect brought an error: the sign-in ends with `why`."""
        if not self._result.done():
            self._result.set_exception(AuthorizationRefused(REFUSED.format(why=why[:200])))


@dataclass
class _Pending:
    server: McpServer
    callback: RelayedCallback
    task: asyncio.Task[str | None]
    deadline: float


class Connections:
    """The sign-ins under way in this process: one per server, each awaiting its redirect."""

    def __init__(self, servers: Mapping[str, McpServer]) -> None:
        self._servers = servers
        self._by_state: dict[str, _Pending] = {}
        self._tasks: dict[str, asyncio.Task[str | None]] = {}

    async def start(self, name: str, redirect_uri: str) -> str | None:
        """Start a sign-in at server `name`; the URL to open (`None`: none was needed).

        Raises:
            LookupError: No enabled server has that name.
            CannotConnect: The server is not one a person signs in to.
            ConnectFailed: The sign-in could not start; the message says why.
        """
        server = self._connectable(name)
        await self._cancel(name)  # a second Connect replaces the first: its state dies
        await forget_sign_in(server)
        callback = RelayedCallback(redirect_uri)
        shown: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def show(url: str) -> None:
            if not shown.done():
                shown.set_result(url)

        helper = server.for_person(SignIn(callback, show, TTL_S), TTL_S)
        task = asyncio.create_task(_sign_in(server, helper), name=f"mcp:{name}:connect")
        self._tasks[name] = task
        task.add_done_callback(lambda done: self._ended(name, done))
        wait_s = server.spec.start_timeout_s
        either: set[asyncio.Future[Any]] = {shown, task}
        await asyncio.wait(either, timeout=wait_s, return_when=asyncio.FIRST_COMPLETED)
        if shown.done() and callback.state is not None:
            deadline = asyncio.get_running_loop().time() + TTL_S
            self._by_state[callback.state] = _Pending(server, callback, task, deadline)
            return shown.result()
        if not task.done():
            task.cancel()
            raise ConnectFailed(NOT_CONNECTED.format(name=name, why=NO_URL.format(s=wait_s)))
        why = task.result()
        if why is not None:
            raise ConnectFailed(NOT_CONNECTED.format(name=name, why=why))
        return None

    async def finish(self, state: str, code: str, error: str, iss: str | None = None) -> Outcome:
        """Take the redirect of the sign-in that sent `state`, once; how it ended.

        `iss` is the issuer the redirect named (RFC 9207), which the SDK checks.
        """
        pending = self._take(state)
        if pending is None:
            return Outcome("unknown", UNKNOWN_STATE)
        if error:
            pending.callback.refuse(error)
        elif code:
            pending.callback.deliver(code, iss)
        else:
            pending.callback.refuse(NO_CODE)
        name = pending.server.spec.name
        wait_s = 2 * pending.server.spec.start_timeout_s + 10  # the token, then two starts
        try:
            why = await asyncio.wait_for(asyncio.shield(pending.task), timeout=wait_s)
        except TimeoutError:
            why = NO_END.format(s=wait_s)
        except asyncio.CancelledError:  # a newer Connect replaced it meanwhile
            return Outcome("unknown", UNKNOWN_STATE)
        if why is not None:
            return Outcome("failed", NOT_CONNECTED.format(name=name, why=why))
        return Outcome("connected", CONNECTED.format(name=name, count=len(pending.server.tools)))

    async def aclose(self) -> None:
        """End every sign-in under way (the process stops)."""
        for name in list(self._tasks):
            await self._cancel(name)

    def _take(self, state: str) -> _Pending | None:
        # Compared in constant time: the state is the callback's only credential.
        found = next((s for s in self._by_state if secrets.compare_digest(s, state)), None)
        pending = self._by_state.pop(found) if found is not None else None
        if pending is None or pending.task.done():
            return None
        if asyncio.get_running_loop().time() > pending.deadline:
            pending.task.cancel()
            return None
        return pending

    def _connectable(self, name: str) -> McpServer:
        server = self._servers.get(name)
        if server is None:
            raise LookupError(NO_SUCH_SERVER.format(name=name))
        spec = server.spec
        why = (
            STDIO
            if spec.transport != "http"
            else MACHINE
            if spec.oauth is not None and not spec.oauth.needs_person
            else OWN_TOKEN
            if spec.static_authorization
            else None
        )
        if why is not None:
            raise CannotConnect(NOT_FOR_PERSON.format(name=name, why=why))
        return server

    async def _cancel(self, name: str) -> None:
        task = self._tasks.pop(name, None)
        if task is None:
            return
        task.cancel()
        with contextlib.suppress(BaseException):
            await task

    def _ended(self, name: str, task: asyncio.Task[str | None]) -> None:
        if self._tasks.get(name) is task:
            del self._tasks[name]
        for state in [s for s, p in self._by_state.items() if p.task is task]:
            del self._by_state[state]
        if not task.cancelled():
            task.exception()  # retrieved: `_sign_in` words its failures itself


def needs_sign_in(server: McpServer) -> bool:
    """Whether `server` is down for want of a person's sign-in (the web chat's Connect)."""
    return server.session is None and server.error == NEEDS_LOGIN.format(name=server.spec.name)


async def _sign_in(server: McpServer, helper: McpServer) -> str | None:
    """Sign in on `helper`, then start `server` with the tokens; why not, or `None`."""
    try:
        await helper.ensure()
        if helper.session is None:
            return helper.error or helper.state
    finally:
        await helper.stop()
    await server.start_now()
    return None if server.session is not None else server.error or server.state


async def forget_sign_in(server: McpServer) -> bool:
    """Forget `server`'s tokens and client registration; whether there were any.

    A sign-in starts afresh this way, from the web chat's Connect and `ducklm mcp login`
    alike, and `ducklm mcp logout` is this alone.
    """
    from ducklm.mcp.oauth.storage import FileTokenStorage  # noqa: PLC0415  it imports the SDK

    return await FileTokenStorage(server.token_path, server.spec.url or "").clear()
