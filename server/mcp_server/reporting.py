"""What a running call tells its caller: progress, and log messages at the level it asked.

Progress goes only to a call that sent a progress token (the spec's rule). Log messages
(`notifications/message`, logger `ducklm`) go at `warning` and above unless the caller
set another level with `logging/setLevel`: a turn's steps are `info`, its problems
`warning` (or `error` when they end it). The level is kept per MCP session, so it holds
on stdio; over the stateless `/mcp` every request is a session of its own, and the
default applies to each call.
"""

from __future__ import annotations

from typing import Any, get_args
from weakref import WeakKeyDictionary

from mcp.server.session import ServerSession
from mcp.shared.context import RequestContext
from mcp.types import LoggingLevel

LEVELS: tuple[LoggingLevel, ...] = get_args(LoggingLevel)
"""The spec's levels, least severe first."""
DEFAULT_LEVEL: LoggingLevel = "warning"
"""Until a caller asks for more, it hears of problems only (steps come as progress)."""
LOGGER = "ducklm"

_levels: WeakKeyDictionary[ServerSession, LoggingLevel] = WeakKeyDictionary()


def set_level(session: ServerSession, level: LoggingLevel) -> None:
    """`logging/setLevel`: from now on `session` hears `level` and anything more severe."""
    _levels[session] = level


def wants(session: ServerSession, level: LoggingLevel) -> bool:
    """Whether `session` asked to hear messages at `level`."""
    return LEVELS.index(level) >= LEVELS.index(_levels.get(session, DEFAULT_LEVEL))


class CallReport:
    """The current call's way back to its caller; built inside the call's handler."""

    def __init__(self, context: RequestContext[ServerSession, Any, Any]) -> None:
        self._session = context.session
        self._request_id = str(context.request_id)
        meta = context.meta
        self._token = meta.progressToken if meta is not None else None

    async def step(self, index: int, text: str) -> None:
        """One step of the work: a progress notification (when asked for) and an info log."""
        if self._token is not None:
            await self._session.send_progress_notification(
                self._token, float(index), message=text, related_request_id=self._request_id
            )
        await self._log("info", text)

    async def problem(self, text: str, *, fatal: bool) -> None:
        """Something went wrong on the way: `error` when it ended the work, else `warning`."""
        await self._log("error" if fatal else "warning", text)

    async def _log(self, level: LoggingLevel, text: str) -> None:
        if wants(self._session, level):
            await self._session.send_log_message(
                level, text, logger=LOGGER, related_request_id=self._request_id
            )
