"""Browser log-in: one-time codes, and the sessions they open, kept across restarts.

The API token never reaches the browser. `ducklm serve` (or `ducklm open`) prints a URL
with a one-time code; opening it trades the code for a session cookie. The session is a
random id, not derived from the token: logging out (or `ducklm open --revoke-all`)
really ends it, and a cookie that leaks, e.g. to another service on the same loopback
address (cookies ignore ports), is worth nothing after that and never reveals the token.

Sessions outlive the process: each is kept in `browser_sessions.json` in the data dir
(`ducklm.stores.browser_sessions`, 0600) as the SHA-256 of its id and its end, so a
restart keeps the browser logged in while the file holds nothing to log in with. The
CSRF value is an HMAC of the id, made again on each request, so it is not stored
either. Codes stay in memory: they last minutes, and a restart prints a fresh one.

Secrets are kept and looked up by their SHA-256: the comparison a dict does then runs
on a digest the caller cannot steer, so its timing says nothing about the secret.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from starlette.requests import HTTPConnection

from ducklm.stores.browser_sessions import read_sessions, write_sessions

CODE_TTL_S = 600.0
SESSION_TTL_S = 7 * 24 * 3600.0
# Codes are made only for holders of the token, sessions only from codes: the caps keep
# a loop of such requests from growing memory without end (the oldest goes first).
MAX_CODES = 32
MAX_SESSIONS = 64
COOKIE = "ducklm_session"
CSRF_HEADER = "X-DuckLM-CSRF"
CSRF_PURPOSE = b"ducklm csrf"

V = TypeVar("V")


@dataclass(frozen=True)
class BrowserSession:
    """A logged-in browser."""

    csrf: str
    """The value the page sends in `X-DuckLM-CSRF` with each state-changing request."""
    expires: float
    """When it ends, on the store's clock (seconds since the epoch)."""


@dataclass
class Logins:
    """The live login codes and browser sessions of one server process."""

    file: Path | None = None
    """Where sessions are kept across restarts (`None`: in this process only)."""
    code_ttl_s: float = CODE_TTL_S
    """How long a code can be used (once)."""
    session_ttl_s: float = SESSION_TTL_S
    """How long a session lasts without logging in again."""
    clock: Callable[[], float] = time.time
    """Seconds since the epoch: a wall clock, since sessions outlive the process."""
    _codes: dict[str, float] = field(default_factory=dict)
    _sessions: dict[str, float] = field(default_factory=dict)
    """Each session's digest and end."""
    _writing: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def load(self) -> None:
        """Take in the sessions the file kept (the server's start)."""
        if self.file is None:
            return
        stored = await asyncio.to_thread(read_sessions, self.file)
        now = self.clock()
        for key, expires in sorted(stored.items(), key=lambda item: item[1]):
            if expires > now and key not in self._sessions:
                _add_capped(self._sessions, key, expires, MAX_SESSIONS)

    def new_code(self) -> str:
        """A fresh one-time login code."""
        self._prune()
        code = secrets.token_urlsafe(24)
        _add_capped(self._codes, _digest(code), self.clock() + self.code_ttl_s, MAX_CODES)
        return code

    async def redeem(self, code: str) -> str | None:
        """Use up `code` and return a new session's id; `None` if unknown, used or expired."""
        expires = self._codes.pop(_digest(code), None)
        if expires is None or expires <= self.clock():
            return None
        self._prune()
        session_id = secrets.token_urlsafe(32)
        _add_capped(
            self._sessions, _digest(session_id), self.clock() + self.session_ttl_s, MAX_SESSIONS
        )
        await self._save()
        return session_id

    def session(self, session_id: str | None) -> BrowserSession | None:
        """The live session with this id, if any."""
        if not session_id:
            return None
        expires = self._sessions.get(_digest(session_id))
        if expires is None or expires <= self.clock():
            return None
        return BrowserSession(_csrf(session_id), expires)

    async def end(self, session_id: str | None) -> None:
        """Log a session out (nothing happens for an unknown id)."""
        if session_id and self._sessions.pop(_digest(session_id), None) is not None:
            await self._save()

    async def revoke_all(self) -> int:
        """Log every browser out; how many live sessions there were."""
        self._prune()
        count = len(self._sessions)
        self._sessions.clear()
        await self._save()
        return count

    async def _save(self) -> None:
        if self.file is None:
            return
        # One write at a time, each of the state as it is when its turn comes: the last
        # write to land is always the newest state.
        async with self._writing:
            self._prune()
            await asyncio.to_thread(write_sessions, self.file, dict(self._sessions))

    def _prune(self) -> None:
        now = self.clock()
        self._codes = {k: v for k, v in self._codes.items() if v > now}
        self._sessions = {k: v for k, v in self._sessions.items() if v > now}


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _csrf(session_id: str) -> str:
    """The session's CSRF value: keyed by the session's secret id, so only it can make it."""
    return hmac.new(session_id.encode(), CSRF_PURPOSE, hashlib.sha256).hexdigest()


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
