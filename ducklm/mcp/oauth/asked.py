"""A sign-in asked of the person during a turn: a server that wants more access (step-up).

A server DuckLM holds a token of may answer a call with 403 `insufficient_scope` and
the scope it needs (`WWW-Authenticate`). The SDK's provider then authorizes again, with
the larger scope: it hands the authorization URL to its redirect handler and waits for
the code at its callback handler. In a turn nobody is at a terminal, so the link is a
question of the call in flight (`CallAsks.elicit_url`, URL mode, held: the call waits
open for the answer, `held.py`): the turn asks it at DuckLM's question door, as it asks
any question; the person opens the link, signs in, and answers Accept; the browser's
redirect came back meanwhile to a loopback listener on the redirect URI the client
registered when the person signed in (`ducklm mcp login`), opened for this sign-in
only. The SDK exchanges the code and makes the request again: the call goes on.

A turn still starts no sign-in of its own: with no token at all the server's 401 says
to run `ducklm mcp login` (`provider.server_auth`).
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from mcp.shared.auth import AuthorizationCodeResult

from ducklm.mcp.asks import CallAsks, QuestionPending, Refused
from ducklm.mcp.errors import NeedsAuthorization
from ducklm.mcp.oauth.loopback import AuthorizationRefused, LoopbackCallback

REDIRECT_WAIT_S = 30.0
"""How long the browser's redirect may lag the person's Accept."""
MORE_ACCESS = (
    "MCP server {name!r} asks for more access ({scope}): open this link and sign in, "
    "then answer Accept to go on with the call"
)
NOT_SIGNED_IN = "the person did not sign in again at MCP server {name!r} ({why})"
NO_CALL = "MCP server {name!r} asked for more access outside one of DuckLM's calls"


class AskedSignIn:
    """The SDK's redirect and callback handlers for a sign-in asked of the person in a turn."""

    def __init__(self, name: str, port: int, asking: Callable[[], list[CallAsks]]) -> None:
        self._name = name
        self._port = port
        self._asking = asking
        self._listener: LoopbackCallback | None = None

    @property
    def redirect_uri(self) -> str:
        """The redirect URI the client registered when the person signed in."""
        return f"http://127.0.0.1:{self._port}/callback"

    async def redirect(self, authorization_url: str) -> None:
        """Ask the person, through the call in flight, to open `authorization_url`."""
        query = parse_qs(urlsplit(authorization_url).query)
        asking = self._asking()
        if len(asking) != 1:  # the request carries no id of the call it belongs to
            raise NeedsAuthorization(NO_CALL.format(name=self._name))
        listener = LoopbackCallback()
        try:
            await listener.open(self._port)
        except OSError as exc:
            raise NeedsAuthorization(NOT_SIGNED_IN.format(name=self._name, why=exc)) from None
        listener.expect(query.get("state", [""])[0])
        self._listener = listener
        scope = query.get("scope", ["more scopes"])[0]
        words = MORE_ACCESS.format(name=self._name, scope=scope)
        try:
            answer = await asking[0].elicit_url(words, authorization_url, hold=True)
        except (QuestionPending, Refused) as exc:
            await self._close()
            raise NeedsAuthorization(NOT_SIGNED_IN.format(name=self._name, why=exc)) from None
        if answer["action"] != "accept":
            await self._close()
            why = f"they chose {answer['action']}"
            raise NeedsAuthorization(NOT_SIGNED_IN.format(name=self._name, why=why))

    async def callback(self) -> AuthorizationCodeResult:
        """The code the person's browser brought back to the listener."""
        listener = self._listener
        if listener is None:
            raise NeedsAuthorization(NOT_SIGNED_IN.format(name=self._name, why="no link shown"))
        try:
            code, state, iss = await listener.wait(REDIRECT_WAIT_S)
        except TimeoutError:
            why = "no redirect came back"
            raise NeedsAuthorization(NOT_SIGNED_IN.format(name=self._name, why=why)) from None
        except AuthorizationRefused as exc:
            raise NeedsAuthorization(NOT_SIGNED_IN.format(name=self._name, why=exc)) from None
        finally:
            await self._close()
        return AuthorizationCodeResult(code=code, state=state, iss=iss)

    async def _close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            await listener.close()


def loopback_port(redirect_uri: str | None) -> int | None:
    """The port of a `http://127.0.0.1:PORT/...` redirect URI (a person's earlier sign-in)."""
    if not redirect_uri:
        return None
    parts = urlsplit(redirect_uri)
    if parts.scheme != "http" or parts.hostname != "127.0.0.1":
        return None
    return parts.port
