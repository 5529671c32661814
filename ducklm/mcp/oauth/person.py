"""How a person authorizes DuckLM at a server: the URL shown, the redirect awaited.

`SignIn` gives the SDK its two handlers: `redirect` hands the authorization URL to
`show` (`ducklm mcp login` prints it and opens a browser when there is one; the tests
and the conformance client fetch it and follow the redirects, the non-interactive
path) and `callback` waits for the browser to come back to the loopback listener
(`loopback.py`), which checks the `state` the URL carried. In a turn nobody is at hand:
`no_person` fails the flow with `NeedsAuthorization`, which reads "run `ducklm mcp
login NAME`".
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Protocol
from urllib.parse import parse_qs, urlsplit

from mcp.shared.auth import AuthorizationCodeResult

from ducklm.mcp.errors import NeedsAuthorization
from ducklm.mcp.oauth.loopback import LoopbackCallback, Redirected

WAIT_S = 300.0
NO_STATE = "the authorization URL carries no state"
TOO_LATE = "nobody authorized DuckLM within {s:.0f} s"

Show = Callable[[str], Awaitable[None]]


class Listener(Protocol):
    """Where the browser's redirect arrives: the loopback listener, or DuckLM's own server.

    The web chat's Connect (`ducklm/mcp/connect.py`) hands `SignIn` a listener that its
    callback route feeds; `ducklm mcp login` uses `LoopbackCallback`.
    """

    @property
    def redirect_uri(self) -> str:
        """The URI the client registers and the server redirects to."""
        ...

    def expect(self, state: str) -> None:
        """Take only the redirect that carries `state`."""

    async def wait(self, timeout_s: float) -> Redirected:
        """The code, state and issuer of the redirect (`TimeoutError` after `timeout_s`)."""
        ...


class SignIn:
    """One person's sign-in: the SDK's `redirect_handler` and `callback_handler`."""

    def __init__(self, listener: Listener, show: Show, wait_s: float) -> None:
        self._listener = listener
        self._show = show
        self._wait_s = wait_s

    @property
    def redirect_uri(self) -> str:
        """The URI the client registers and the server redirects to (its listener's)."""
        return self._listener.redirect_uri

    async def redirect(self, authorization_url: str) -> None:
        """Show the person `authorization_url`; the redirect must carry its state."""
        state = parse_qs(urlsplit(authorization_url).query).get("state", [""])[0]
        if not state:
            raise NeedsAuthorization(NO_STATE)
        self._listener.expect(state)
        await self._show(authorization_url)

    async def callback(self) -> AuthorizationCodeResult:
        """The code, state and issuer (RFC 9207, checked by the SDK) the browser brought back."""
        try:
            code, state, iss = await self._listener.wait(self._wait_s)
        except TimeoutError:
            raise NeedsAuthorization(TOO_LATE.format(s=self._wait_s)) from None
        return AuthorizationCodeResult(code=code, state=state, iss=iss)


@asynccontextmanager
async def sign_in(
    show: Show, *, port: int | None = None, wait_s: float = WAIT_S
) -> AsyncIterator[SignIn]:
    """A `SignIn` with its loopback listener open for the block."""
    listener = LoopbackCallback()
    await listener.open(port)
    try:
        yield SignIn(listener, show, wait_s)
    finally:
        await listener.close()


async def no_person(authorization_url: str = "") -> None:
    """The redirect handler of a turn: nobody can sign in now."""
    del authorization_url
    raise NeedsAuthorization("a person must sign in")
