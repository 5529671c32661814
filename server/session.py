"""Browser log-in: one-time codes, and the sessions they open, held in memory.

The API token never reaches the browser. `ducklm serve` (or `ducklm open`) prints a URL
with a one-time code; opening it trades the code for a session cookie. The session is a
random id kept here, not derived from the token: logging out (or stopping the server)
really ends it, and a cookie that leaks, e.g. to another service on the same loopback
address (cookies ignore ports), is worth nothing after that and never reveals the token.

Secrets are kept and looked up by their SHA-256: the comparison a dict does then runs
on a digest the caller cannot steer, so its timing says nothing about the secret.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from starlette.requests import HTTPConnection

CODE_TTL_S = 600.0
SESSION_TTL_S = 7 * 24 * 3600.0
# Codes are made only for holders of the token, sessions only from codes: the caps keep
# a loop of such requests from growing memory without end (the oldest goes first).
MAX_CODES = 32
MAX_SESSIONS = 64
COOKIE = "ducklm_session"
CSRF_HEADER = "X-DuckLM-CSRF"

V = TypeVar("V")


@dataclass(frozen=True)
class BrowserSession:
    """A logged-in browser."""

    csrf: str
    """The value the page sends in `X-DuckLM-CSRF` with each state-changing request."""
    expires: float
    """When it ends, on the store's clock."""


@dataclass
class Logins:
    """The live login codes and browser sessions of one server process."""

    code_ttl_s: float = CODE_TTL_S
    """How long a code can be used (once)."""
    session_ttl_s: float = SESSION_TTL_S
    """How long a session lasts without logging in again."""
    clock: Callable[[], float] = time.monotonic
    """Seconds on a clock that only goes forward; tests move it."""
    _codes: dict[str, float] = field(default_factory=dict)
    _sessions: dict[str, BrowserSession] = field(default_factory=dict)

    def new_code(self) -> str:
        """A fresh one-time login code."""
        self._prune()
        code = secrets.token_urlsafe(24)
        _add_capped(self._codes, _digest(code), self.clock() + self.code_ttl_s, MAX_CODES)
        return code

    def redeem(self, code: str) -> str | None:
        """Use up `code` and return a new session's id; `None` if unknown, used or expired."""
        expires = self._codes.pop(_digest(code), None)
        if expires is None or expires <= self.clock():
            return None
        self._prune()
        session_id = secrets.token_urlsafe(32)
        session = BrowserSession(secrets.token_urlsafe(32), self.clock() + self.session_ttl_s)
        _add_capped(self._sessions, _digest(session_id), session, MAX_SESSIONS)
        return session_id

    def session(self, session_id: str | None) -> BrowserSession | None:
        """The live session with this id, if any."""
        if not session_id:
            return None
        found = self._sessions.get(_digest(session_id))
        if found is None or found.expires <= self.clock():
            return None
        return found

    def end(self, session_id: str | None) -> None:
        """Log a session out (nothing happens for an unknown id)."""
        if session_id:
            self._sessions.pop(_digest(session_id), None)

    def _prune(self) -> None:
        now = self.clock()
        self._codes = {k: v for k, v in self._codes.items() if v > now}
        self._sessions = {k: v for k, v in self._sessions.items() if v.expires > now}


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _add_capped(items: dict[str, V], key: str, value: V, cap: int) -> None:
    while len(items) >= cap:
        del items[next(iter(items))]  # dicts keep insertion order: this is the oldest
    items[key] = value


def cookie_name(request: HTTPConnection) -> str:
    """The session cookie's name, one per server port.

    Browsers keep cookies per host, not per port: with one name, logging in to a second
    DuckLM server on this machine would log the browser out of the first.
    """
    server = request.scope.get("server")
    return f"{COOKIE}_{server[1]}" if server and server[1] else COOKIE


def logins(request: HTTPConnection) -> Logins:
    """The app's `Logins` (made by `create_app`)."""
    found: Logins = request.app.state.logins
    return found


def browser_session(request: HTTPConnection) -> BrowserSession | None:
    """The live session the request's cookie names, if any."""
    return logins(request).session(request.cookies.get(cookie_name(request)))
