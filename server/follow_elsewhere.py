"""Following a task that another worker runs: its stored events, then live ones.

The seam between the two is where events are lost or doubled, so the order is fixed:
subscribe to the task's channel first, then read the stored tail, then take the live
notices, skipping every key already sent. An audited event sent before the subscription
but written to the table after the tail was read (the audit is written in batches, a
moment behind the run) shows as a gap in the audit numbers: it is read from the table
then, as is an event too large for a notice. Tokens are not stored: a follower gets
those sent after it subscribed. When the relay is quiet for `IDLE_CHECK_S` (a lost
notice, a worker that died) the table is read again, so the stream still ends.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

from ducklm.kit.events import Event
from ducklm.runtime.facade import DuckLM
from ducklm.server.event_keys import EventKey, parse_key
from ducklm.stores import TaskRecord
from ducklm.stores.relay import Notice, Relay

log = logging.getLogger(__name__)

GAP_POLL_S = 0.02
GAP_WAIT_S = 5.0
"""How long a missing audit number is waited for (a batch is written within 50 ms)."""
IDLE_CHECK_S = 5.0

Keyed = tuple[EventKey, Event]


async def stored_events(duck: DuckLM, task: TaskRecord, after: int) -> list[Event]:
    """The audited events of `task` with `seq > after`."""
    records = await duck.events(task.thread_id, after=after)
    return [{**r.data, "seq": r.seq} for r in records if r.data.get("task_id") == task.task_id]


async def follow_elsewhere(
    duck: DuckLM, relay: Relay, task: TaskRecord, after: EventKey
) -> AsyncIterator[Keyed]:
    """The task's events after `after`, stored then live, until its run's `done`."""
    async with relay.subscribe(task.task_id) as inbox:
        # Read after subscribing: a run that starts later sends on the channel too.
        running = await _running_run(duck, task)
        tail = _Tail(duck, task, after)
        for key, item in await tail.read_through(None):
            yield key, item
            if item.get("type") == "done" and running and item.get("run_id") == running:
                return
        if running is None:  # it ended before this follower came: the table has it all
            return
        async for key, item in _live(inbox, tail):
            yield key, item
            if item.get("type") == "done":
                return


async def _live(inbox: asyncio.Queue[Notice | None], tail: _Tail) -> AsyncIterator[Keyed]:
    while True:
        try:
            notice = await asyncio.wait_for(inbox.get(), IDLE_CHECK_S)
        except TimeoutError:
            notice = None
        if notice is None:  # quiet or broken: whatever the table has
            for found in await tail.read_through(None):
                yield found
            continue
        key = parse_key(notice.key)
        if key is None or key <= tail.last:
            continue
        need = key.seq if notice.event is None or key.k > 0 else key.seq - 1
        if need > tail.last.seq:
            for found in await tail.read_through(need):
                yield found
        if notice.event is not None and key > tail.last:
            tail.last = key
            yield key, notice.event


async def _running_run(duck: DuckLM, task: TaskRecord) -> str | None:
    runs = await duck.runs(task.thread_id)
    return next(
        (r.run_id for r in reversed(runs) if r.task_id == task.task_id and r.status == "running"),
        None,
    )


class _Tail:
    """The stored events of a task, read on from the last key sent."""

    def __init__(self, duck: DuckLM, task: TaskRecord, last: EventKey) -> None:
        self._duck = duck
        self._task = task
        self.last = last

    async def read_through(self, need: int | None) -> list[Keyed]:
        """The task's stored events after `last`; `last` moves past them.

        With `need`, waits (up to `GAP_WAIT_S`) until the thread's audit has every
        number through it.
        """
        deadline = time.monotonic() + GAP_WAIT_S
        while True:
            records = await self._duck.events(self._task.thread_id, after=self.last.seq)
            have = records[-1].seq if records else self.last.seq
            if need is None or have >= need or time.monotonic() > deadline:
                break
            await asyncio.sleep(GAP_POLL_S)
        if need is not None and have < need:
            log.warning(
                "audit events %d-%d of task %s never came", have + 1, need, self._task.task_id
            )
        found = []
        for r in records:
            if r.data.get("task_id") == self._task.task_id and EventKey(r.seq) > self.last:
                found.append((EventKey(r.seq), {**r.data, "seq": r.seq}))
        if found:
            self.last = found[-1][0]
        return found
