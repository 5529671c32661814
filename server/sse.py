"""Task events as Server-Sent Events: the event's type is the SSE event name.

Events already hold only messages for people (the runner describes failures; it never
passes exception text on), so they are sent as they are. Each event's SSE id is its key
in the task (`event_keys.py`), so `Last-Event-ID` resumes on any worker.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import AsyncIterator, Sequence

from sse_starlette import EventSourceResponse, ServerSentEvent

from ducklm.kit.events import Event
from ducklm.server.event_keys import START, EventKey, key_text
from ducklm.server.tasks import LiveTask

HEARTBEAT_S = 15


def event_stream(
    live: LiveTask, *, before: Sequence[Event] = (), after: EventKey = START
) -> EventSourceResponse:
    """Send `before` (stored events of earlier runs), then follow `live` to its end.

    `after`: the key of the last event the client has; only later ones are sent.
    """
    return EventSourceResponse(_follow(live, before, after), ping=HEARTBEAT_S)


def replay_stream(events: Sequence[Event], after: EventKey = START) -> EventSourceResponse:
    """Send stored events (after `after`) of a task that has no run going, then end."""
    return keyed_stream(_replay(events, after))


def keyed_stream(items: AsyncIterator[tuple[EventKey, Event]]) -> EventSourceResponse:
    """Events with their keys, as they come (a task run on another worker's too)."""
    return EventSourceResponse(_encoded(items), ping=HEARTBEAT_S)


def as_sse(key: tuple[int, int], item: Event) -> ServerSentEvent:
    """One event: `event:` its type, `data:` the event as JSON, `id:` its key in the task."""
    return ServerSentEvent(
        data=json.dumps(item, default=str, ensure_ascii=False),
        event=item["type"],
        id=key_text(key),
    )


async def _encoded(items: AsyncIterator[tuple[EventKey, Event]]) -> AsyncIterator[ServerSentEvent]:
    async for key, item in items:
        yield as_sse(key, item)


async def _follow(
    live: LiveTask, before: Sequence[Event], after: EventKey
) -> AsyncIterator[ServerSentEvent]:
    async for key, item in _replay(before, after):
        yield as_sse(key, item)
    # A client that goes away only ends this loop; the run goes on (see server/tasks.py).
    keys = live.keys
    async for index, item in live.follow(bisect.bisect_right(keys, after)):
        yield as_sse(keys[index], item)


async def _replay(
    events: Sequence[Event], after: EventKey
) -> AsyncIterator[tuple[EventKey, Event]]:
    for item in events:
        if (key := EventKey(int(item["seq"]))) > after:
            yield key, item
