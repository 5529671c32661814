"""Following a door run that another worker runs (or enqueued): its relayed stream.

The worker running the run relays and journals its events once a follower asks for
them (`runs/relay.py`; asked again at every quiet spell, in case the ask came before the
run was tracked there); here they are read back with the ids that worker gives, so a
client may reconnect to any worker with `Last-Event-ID`. A follower "from now" of a run
nobody asked for before takes the events after those the first relayed batch brings.
The order that loses and doubles nothing, as for `/v1` streams
(`server/follow_elsewhere.py`): subscribe to the run's channel first, then read the
journal after the last id sent, then take the notices, skipping every id already sent.
A notice past a gap (or one whose event was too large for a notice) is read from the
journal, whose rows are written before their notice. When the channel is quiet for
`IDLE_CHECK_S` (a lost notice, a worker that died) the journal and the run's record are
read again, so the stream still ends. A run that never relays its end (its worker died:
the reaper goes on with its task as a DuckLM run, not as this door's) ends here when its
record says it no longer runs.

An enqueued run is waited for (its row, polled) until a worker starts it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Collection

from ducklm.runtime.facade import DuckLM
from ducklm.server.agent_protocol.common.deps import Door
from ducklm.server.agent_protocol.runs.lookup import FoundRun, duck_record, until_started
from ducklm.server.agent_protocol.runs.relay import END, ask, from_item, stream_of
from ducklm.server.agent_protocol.streaming.events import WireEvent, encode
from ducklm.server.agent_protocol.streaming.joining import ALWAYS, REFUSED, mode_of
from ducklm.server.tasks import TaskHub
from ducklm.stores.agent_protocol.runs import RunRow
from ducklm.stores.relay import JournalReader, Notice, Relay

IDLE_CHECK_S = 5.0
END_WAIT_S = 1.0
"""How long a run that has ended is waited on for its stream's `END`."""
Inbox = asyncio.Queue[Notice | None]
_cancelling: set[asyncio.Task[None]] = set()
"""Cancels asked by followers that left (held: the loop keeps only weak references)."""


def followable(found: FoundRun, hub: TaskHub) -> bool:
    """Whether another worker may have the stream of a run this worker does not hold.

    A door run that is enqueued or running, or a resumable one (its journal is kept a
    while after its end); never without a relay (SQLite: one process holds every run).
    """
    row = found.row
    if hub.relay is None or row is None:
        return False
    running = found.record is not None and found.record.status == "running"
    return row.state == "pending" or running or bool(row.kwargs.get("stream_resumable"))


async def follow_elsewhere(
    found: FoundRun,
    *,
    duck: DuckLM,
    door: Door,
    relay: Relay,
    after: int | None,
    only: Collection[str] = (),
    cancel_on_disconnect: bool = False,
) -> AsyncIterator[WireEvent]:
    """The run's events after id `after` (`None`: from now; `-1`: all), as `joining.follow`."""
    if after is not None and after < 0:
        yield encode("metadata", {"run_id": found.run_id, "attempt": 1}, "0")
        after = 0
    row = await until_started(found, door)
    if row is None or row.state != "started" or row.duck_run_id is None:
        if row is not None and row.state == "refused":
            yield encode("error", {"error": REFUSED, "message": row.error or ""})
        return
    ended = False
    try:
        async for item in _relayed(found.thread_id, row, duck, relay, after):
            if not only or item.event in ALWAYS or mode_of(item.event) in only:
                yield item
        ended = True
    finally:
        if cancel_on_disconnect and not ended:
            # A task of its own: the response's cancel scope cancels every await here.
            cancelling = asyncio.create_task(_cancel(found.thread_id, row, duck))
            _cancelling.add(cancelling)
            cancelling.add_done_callback(_cancelling.discard)


async def _relayed(
    thread_id: str, row: RunRow, duck: DuckLM, relay: Relay, after: int | None
) -> AsyncIterator[WireEvent]:
    stream = stream_of(row.run_id)
    async with relay.subscribe(stream) as inbox:
        # Asked and read after subscribing: what is sent from now on comes as a notice.
        ask(relay, row.run_id)
        running = await _running(thread_id, row, duck)
        last = await relay.journal.last(stream) if after is None else after
        if after is None and last == 0 and running:  # relayed from its start once asked
            last = await _first_batch(inbox, relay, stream, row.run_id)
        tail = _Tail(relay.journal, stream, last)
        for item in await tail.read():
            if item is None:
                return
            yield item
        # Ended already: its last events and `END` may still be on their way (the run's
        # record ends a moment before its relay's last flush), so a short wait for them.
        idle_s = IDLE_CHECK_S if running else END_WAIT_S
        still = lambda: _running(thread_id, row, duck)  # noqa: E731
        async for item in _live(inbox, tail, still, idle_s, lambda: ask(relay, row.run_id)):
            yield item


async def _first_batch(inbox: Inbox, relay: Relay, stream: str, run_id: str) -> int:
    """The last id of what the run's worker journaled on being asked: "now" for a follower.

    Its backlog is journaled in one flush, before the flush's notices.
    """
    try:
        await asyncio.wait_for(inbox.get(), IDLE_CHECK_S)
    except TimeoutError:
        ask(relay, run_id)
    return await relay.journal.last(stream)


async def _live(
    inbox: Inbox,
    tail: _Tail,
    running: Callable[[], Awaitable[bool]],
    idle_s: float,
    again: Callable[[], None],
) -> AsyncIterator[WireEvent]:
    while True:
        try:
            notice = await asyncio.wait_for(inbox.get(), idle_s)
        except TimeoutError:
            notice = None
        if notice is None:  # quiet or broken: whatever the journal has, and is it over?
            again()  # an ask that came before the run was tracked there went unanswered
            still = await running()
            for found in await tail.read():
                if found is None:
                    return
                yield found
            if not still:
                return
            continue
        key = int(notice.key) if notice.key.isdigit() else 0
        if key <= tail.last:
            continue
        if key > tail.last + 1 or notice.event is None:  # a gap, or too large a notice
            for found in await tail.read():
                if found is None:
                    return
                yield found
            continue
        tail.last = key
        if END in notice.event:
            return
        yield from_item(key, notice.event)


class _Tail:
    """The journal of a run's stream, read on from the last id sent."""

    def __init__(self, journal: JournalReader, stream: str, last: int) -> None:
        self._journal = journal
        self._stream = stream
        self.last = last

    async def read(self) -> list[WireEvent | None]:
        """The events after `last` (`None` last: the stream's end); `last` moves on."""
        found: list[WireEvent | None] = []
        for key, item in await self._journal.read(self._stream, self.last):
            self.last = key
            if END in item:
                found.append(None)
                break
            found.append(from_item(key, item))
        return found


async def _running(thread_id: str, row: RunRow, duck: DuckLM) -> bool:
    assert row.duck_run_id is not None  # started
    record = await duck_record(thread_id, row.duck_run_id, duck)
    return record is not None and record.status == "running"


async def _cancel(thread_id: str, row: RunRow, duck: DuckLM) -> None:
    """The follower left with `cancel_on_disconnect`: mark the run for its worker."""
    assert row.duck_run_id is not None
    record = await duck_record(thread_id, row.duck_run_id, duck)
    if record is not None and record.status == "running" and record.task_id:
        with contextlib.suppress(Exception):  # the client is gone: nobody to tell
            await duck.request_cancel(record.task_id)
