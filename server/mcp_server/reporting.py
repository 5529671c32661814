"""What a running call tells its caller: progress, and log messages at the level it asked.

Progress goes only to a call that sent a progress token (the spec's rule; the SDK's
`report_progress` keeps it). Log messages (`notifications/message`, logger `ducklm`)
go at `warning` and above unless the caller set another level: a turn's steps are
`info`, its problems `warning` (or `error` when they end it). At 2025-11-25 the level is
set with `logging/setLevel` and kept per connection, so it holds on stdio (over the
stateless `/mcp` every request is a connection of its own, and the default applies to
each call). At 2026-07-28 a request asks for its level in its own `_meta`, and the SDK
sends nothing it did not ask for; the logging methods are deprecated there, which the
SDK says with a warning that is kept quiet here (they serve 2025-11-25 clients).
"""

from __future__ import annotations

import warnings
from typing import Any, get_args
from weakref import WeakKeyDictionary

from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import LoggingLevel
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

LEVELS: tuple[LoggingLevel, ...] = get_args(LoggingLevel)
"""The spec's levels, least severe first."""
DEFAULT_LEVEL: LoggingLevel = "warning"
"""Until a caller asks for more, it hears of problems only (steps come as progress)."""
LOGGER = "ducklm"

_levels: WeakKeyDictionary[Any, LoggingLevel] = WeakKeyDictionary()


def _connection(session: ServerSession) -> Any:
    # The SDK builds a `ServerSession` per request; the level belongs to the connection
    # they share, which it does not expose.
    return session._connection


def set_level(session: ServerSession, level: LoggingLevel) -> None:
    """`logging/setLevel`: from now on `session`'s connection hears `level` and above."""
    _levels[_connection(session)] = level


def wants(session: ServerSession, level: LoggingLevel) -> bool:
    """Whether `session`'s connection asked to hear messages at `level`."""
    if session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return True  # the request's `_meta` decides, and the SDK keeps to it
    wanted = _levels.get(_connection(session), DEFAULT_LEVEL)
    return LEVELS.index(level) >= LEVELS.index(wanted)


class CallReport:
    """The current call's way back to its caller; built inside the call's handler."""

    def __init__(self, context: ServerRequestContext[Any, Any]) -> None:
        self._session = context.session
        self._request_id = context.request_id

    async def step(self, index: int, text: str) -> None:
        """One step of the work: a progress notification (when asked for) and an info log."""
        await self._session.report_progress(float(index), message=text)
        await self._log("info", text)

    async def problem(self, text: str, *, fatal: bool) -> None:
        """Something went wrong on the way: `error` when it ended the work, else `warning`."""
        await self._log("error" if fatal else "warning", text)

    async def _log(self, level: LoggingLevel, text: str) -> None:
        if not wants(self._session, level):
            return
        with warnings.catch_warnings():  # the warning comes with the call, not the await
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            sending = self._session.send_log_message(
                level, text, logger=LOGGER, related_request_id=self._request_id
            )
        await sending
