"""Task events as Server-Sent Events: the event's type is the SSE event name.

Events already hold only messages for people (the runner describes failures; it never
passes exception text on), so they are sent as they are.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence

from sse_starlette import EventSourceResponse, ServerSentEvent

from ducklm.kit.events import Event
from ducklm.server.tasks import LiveTask

HEARTBEAT_S = 15


def event_stream(live: LiveTask, *, before: Sequence[Event] = ()) -> EventSourceResponse:
    """Send `before` (stored events of earlier runs), then follow `live` to its end."""
    return EventSourceResponse(_follow(live, before), ping=HEARTBEAT_S)


def replay_stream(events: list[Event]) -> EventSourceResponse:
    """Send stored events of a task that has no run going, then end."""
    return EventSourceResponse(_replay(events), ping=HEARTBEAT_S)


def as_sse(index: int, item: Event) -> ServerSentEvent:
    """One event: `event:` its type, `data:` the event as JSON, `id:` its index in this stream."""
    return ServerSentEvent(
        data=json.dumps(item, default=str, ensure_ascii=False),
        event=item["type"],
        id=str(index),
    )


async def _follow(live: LiveTask, before: Sequence[Event]) -> AsyncIterator[ServerSentEvent]:
    for index, item in enumerate(before):
        yield as_sse(index, item)
    # A client that goes away only ends this loop; the run goes on (see server/tasks.py).
    async for index, item in live.follow():
        yield as_sse(len(before) + index, item)


async def _replay(events: list[Event]) -> AsyncIterator[ServerSentEvent]:
    for index, item in enumerate(events):
        yield as_sse(index, item)
