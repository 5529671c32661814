"""The one-shot listener that takes an authorization server's redirect back to DuckLM.

Bound to 127.0.0.1 (port 0 unless the client was registered with a fixed port, RFC 8252
section 7.3), it answers `GET /callback?code=...&state=...` once: only a request whose
`state` is the one DuckLM sent is taken (another page of the person's browser, or a
stale tab, gets a 400 and the listener goes on waiting), and the browser is told it can
close the tab. Its `iss` (RFC 9207) goes with the code, for the SDK to check. An
`error=` redirect with the right state ends the wait with the server's reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from urllib.parse import parse_qs, urlsplit

CALLBACK_PATH = "/callback"
MAX_REQUEST_BYTES = 16_384
PAGE = "<!doctype html><title>DuckLM</title><p>{text}</p>"
DONE = "DuckLM is authorized. You can close this tab."
REFUSED = "The authorization server refused: {why}"
WRONG_STATE = "This is not the authorization DuckLM is waiting for."

Redirected = tuple[str, str, str | None]
"""What the redirect brought: the code, the state, and the issuer when it named one."""


class AuthorizationRefused(Exception):
    """The authorization server redirected back with an error (the person said no)."""


class LoopbackCallback:
    """One listener on 127.0.0.1; `redirect_uri` is what the client registers and sends."""

    def __init__(self) -> None:
        self._server: asyncio.Server | None = None
        self._state: str | None = None
        self._result: asyncio.Future[Redirected] = asyncio.get_running_loop().create_future()
        self.port = 0

    async def open(self, port: int | None = None) -> str:
        """Listen (on `port`, or one the kernel picks); the redirect URI."""
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", port or 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.redirect_uri

    @property
    def redirect_uri(self) -> str:
        """Where the authorization server sends the person's browser back to."""
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    def expect(self, state: str) -> None:
        """Take only the redirect that carries `state` (from the authorization URL)."""
        self._state = state

    async def wait(self, timeout_s: float) -> Redirected:
        """The code, state and issuer of the redirect.

        Raises:
            AuthorizationRefused: The server redirected back with an error.
            TimeoutError: No redirect within `timeout_s`.
        """
        return await asyncio.wait_for(asyncio.shield(self._result), timeout=timeout_s)

    async def close(self) -> None:
        """Stop listening."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), timeout=2)

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=10)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            writer.close()
            return
        status, text = self._take(head[:MAX_REQUEST_BYTES].decode("latin-1"))
        body = PAGE.format(text=text).encode()
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    def _take(self, head: str) -> tuple[str, str]:
        """The response to one request, and the result when it is the awaited redirect."""
        method, _, rest = head.partition(" ")
        target = urlsplit(rest.partition(" ")[0])
        if method != "GET" or target.path != CALLBACK_PATH:
            return "404 Not Found", "Not found."
        query = {k: v[0] for k, v in parse_qs(target.query).items()}
        state = query.get("state", "")
        if self._state is None or not secrets.compare_digest(state, self._state):
            return "400 Bad Request", WRONG_STATE
        if self._result.done():
            return "200 OK", DONE
        if "error" in query:
            why = " ".join(filter(None, (query["error"], query.get("error_description"))))
            self._result.set_exception(AuthorizationRefused(REFUSED.format(why=why[:200])))
            return "200 OK", REFUSED.format(why="see DuckLM")
        if not query.get("code"):
            return "400 Bad Request", WRONG_STATE
        self._result.set_result((query["code"], state, query.get("iss")))
        return "200 OK", DONE
