"""Following a run: its events with ids, from the start, from now, or after a given id.

Every event of a run's stream has an id, its position in the run's whole stream (the
`metadata` event is `0`), counted over the modes the run was started with: a client
that joins with fewer modes gets gaps, never different numbers. A join with
`Last-Event-ID` gets every event after that id and then follows live, so a client that
lost its connection misses nothing and sees nothing twice. Without one, a join gets what
comes from now on, as the LangGraph server does; `-1` asks for all of them.

The events come from the run's `LiveTask`, which keeps all of them while it runs. A
run started with `stream_resumable` is kept here for `RETAIN_S` after its end (up to
`RETAIN_RUNS` runs), so a client that comes back after the end still gets what it
missed; other runs are dropped at their end.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass, field

from ducklm.kit.events import Event
from ducklm.server.agent_protocol.common.schemas import StreamMode
from ducklm.server.agent_protocol.streaming.events import WireEvent, count_events, encode, map_items
from ducklm.server.tasks import Chunk, LiveTask

RETAIN_S = 600.0
RETAIN_RUNS = 256
ALWAYS = frozenset({"metadata", "error"})
"""Events every follower gets, whatever modes it asked for."""
REFUSED = "RunRefused"


@dataclass
class RunHandle:
    """A run of this door, from its admission (maybe enqueued) to its end."""

    run_id: str
    thread_id: str
    modes: tuple[StreamMode, ...]
    resumable: bool = False
    started: asyncio.Future[LiveTask] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    """Its `LiveTask` once it runs; an exception when it could not start (or was
    cancelled while enqueued)."""
    ended_at: float | None = None


class RunStreams:
    """The door's runs that can be followed: running, enqueued, or recently ended."""

    def __init__(self) -> None:
        self._runs: OrderedDict[str, RunHandle] = OrderedDict()

    def track(self, handle: RunHandle) -> None:
        """Follow `handle` from now on (and forget old ended runs)."""
        self._expire()
        self._runs[handle.run_id] = handle

    def get(self, run_id: str) -> RunHandle | None:
        """The run `run_id` while it can be followed, else `None`."""
        self._expire()
        return self._runs.get(run_id)

    def ended(self, handle: RunHandle) -> None:
        """`handle` has ended: kept for a while if resumable, else forgotten."""
        handle.ended_at = time.monotonic()
        if not handle.resumable:
            self._runs.pop(handle.run_id, None)

    def _expire(self) -> None:
        now = time.monotonic()
        ended = [h for h in self._runs.values() if h.ended_at is not None]
        old = [h for h in ended if now - (h.ended_at or now) > RETAIN_S]
        old += ended[len(old) : max(len(old), len(ended) - RETAIN_RUNS)]
        for handle in old:
            self._runs.pop(handle.run_id, None)


async def follow(
    handle: RunHandle,
    *,
    after: int | None = None,
    from_now: bool = False,
    only: Collection[str] = (),
    cancel_on_disconnect: bool = False,
) -> AsyncIterator[WireEvent]:
    """The run's events with ids: after id `after`, or from now, or all of them.

    `only`: the stream modes this follower wants (empty: the run's own). An enqueued run
    is waited for (its `metadata` first). A follower that leaves with
    `cancel_on_disconnect` cancels the run.
    """
    if after is None and not from_now:
        after = -1
    if after is not None and after < 0:  # from the very start
        yield encode("metadata", {"run_id": handle.run_id, "attempt": 1}, "0")
        after = 0
    try:
        live = await asyncio.shield(handle.started)
    except asyncio.CancelledError:
        if handle.started.cancelled():  # cancelled while enqueued: it never ran
            return
        raise
    except Exception as exc:  # an enqueued run that could not start: said why
        yield encode("error", {"error": REFUSED, "message": str(exc)})
        return
    ended = False
    try:
        async for item in _numbered(handle, live, after, set(only or handle.modes)):
            yield item
        ended = True
    finally:
        if cancel_on_disconnect and not ended and live.runner is not None:
            live.runner.cancel()


async def _numbered(
    handle: RunHandle, live: LiveTask, after: int | None, wanted: set[str]
) -> AsyncIterator[WireEvent]:
    items = live.wire if live.wire is not None else live.events
    # No `after`: from now. The ids the run's items so far gave are skipped (mapped all
    # the same, as `messages` accumulates each message over its chunks).
    skip_through = count_events(list(items), handle.modes) if after is None else after
    index = 0
    async for name, payload in map_items(_items(live), handle.modes):
        index += 1
        if index > skip_through and (name in ALWAYS or mode_of(name) in wanted):
            yield encode(name, payload, str(index))


def mode_of(event: str) -> str:
    """The stream mode an event name belongs to (a subgraph's `mode|ns` too)."""
    name = event.split("|", 1)[0]
    if name == "messages":
        return "messages-tuple"
    return name.split("/", 1)[0]


def parse_last_event_id(value: str | None) -> int | None:
    """`Last-Event-ID` as a position (`-1`: before the first), else `None`.

    `None` also for an id this door never gives (it follows from now, as without one).
    """
    text = (value or "").strip()
    return int(text) if text.removeprefix("-").isdigit() else None


def _items(live: LiveTask) -> AsyncIterator[Event | Chunk]:
    """Events and chunks of a door run; events only for a run another door started."""
    if live.wire is not None:
        return live.follow_wire()
    return _events(live)


async def _events(live: LiveTask) -> AsyncIterator[Event | Chunk]:
    async for _, item in live.follow():
        yield item


def foreign_handle(run_id: str, live: LiveTask) -> RunHandle:
    """A handle to follow a running run another door started (its DuckLM events only)."""
    handle = RunHandle(run_id, live.thread_id, ("custom",))
    handle.started.set_result(live)
    return handle
