"""An MCP call's progress notifications as `tool_progress` events, for its tool card.

The call hears the server's `notifications/progress` through
`tools/mcp_info.py:progress_listener`; this module turns each into an event the doors
show (the web chat's card, `ducklm chat`). A server may report many times a second, and
a run keeps its live events for a reloaded page, so they are thinned to one each
`MIN_GAP_S`, never dropping the one that says the work is complete.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from langgraph.runtime import Runtime

from ducklm.kit.events import emit
from ducklm.tools.mcp_info import McpToolInfo, ProgressListener

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

MIN_GAP_S = 0.2
"""The least time between two `tool_progress` events of one call."""
MAX_MESSAGE_CHARS = 300
"""A server's progress message is a status line, not a result."""


def progress_events(
    runtime: Runtime[DuckContext], call_id: str, info: McpToolInfo
) -> ProgressListener:
    """The listener that emits `tool_progress` for the call `call_id` of the MCP tool `info`."""
    last = -MIN_GAP_S

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        nonlocal last
        now = time.monotonic()
        complete = total is not None and progress >= total
        if now - last < MIN_GAP_S and not complete:
            return
        last = now
        emit(
            runtime,
            "tool_progress",
            call_id=call_id,
            tool=info.name,
            server=info.server,
            mcp_tool=info.tool,
            progress=progress,
            total=total,
            message=(message or "")[:MAX_MESSAGE_CHARS] or None,
        )

    return on_progress
