"""The drainer: each worker starts runs from the run queue while it has room.

One per server, started by the door's lifespan. Each pass it asks the queue for the
runs that may start now (each the oldest of a thread with no running run, oldest
first: `ducklm/stores/agent_protocol/run_queue.py`), takes as many as this worker has room for
(`Settings.worker_runs` minus the runs going on here and the rows it holds, as the
reaper counts it), rebuilds each run's `RunSpec` from its stored request
(`run_spec.queued_run`) and starts it the way a request does (`launch.begin`). Rows
this worker took as they were written (a client waits here, or it had room) are
started as they were admitted, whatever the room.

Wake-up: a pass right after this worker enqueues or ends a run (an `asyncio.Event`),
else a poll: every `BUSY_POLL_S` while rows wait or are held here, every `IDLE_POLL_S`
when none were found (one indexed query on a small table). Polling, not PostgreSQL
`LISTEN/NOTIFY`: a run another worker must take is one that waited already (its
admitting worker was full, or its thread busy), so a quarter of a second adds little,
and a poll also sees what no notification says (a thread whose run ended on another
worker, a taker that died). SQLite: one process, no limit, every row its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from dataclasses import dataclass

from fastapi import HTTPException
from pydantic import ValidationError

from ducklm.runtime.facade import DuckLM, NotWaitingError
from ducklm.server.agent_protocol.common.deps import Door
from ducklm.server.agent_protocol.common.schemas import RunCreate
from ducklm.server.agent_protocol.runs.launch import begin, named
from ducklm.server.agent_protocol.runs.spec import RunSpec, queued_run
from ducklm.server.agent_protocol.streaming.joining import RunHandle
from ducklm.server.tasks import TaskHub, ThreadBusy
from ducklm.stores.agent_protocol.run_queue import QueuedRun
from ducklm.stores.agent_protocol.runs import RunRow
from ducklm.tools.hitl import DecisionError

log = logging.getLogger(__name__)

BUSY_POLL_S = 0.25
IDLE_POLL_S = 0.5
WAITING = "thread {thread_id} waits for an answer: the enqueued run cannot start"
CANNOT_START = "the run could not start (the server's log says why)"
BAD_REQUEST = "its stored request is no longer valid: {why}"
UNBOUNDED = 100_000
"""SQLite's room: no bound, but a number a query's `LIMIT` takes."""
STALE_BEATS = 3
"""Heartbeats without a renewal after which a taken row is takeable again (as a lease)."""


@dataclass(frozen=True)
class Held:
    """A row this worker holds with its run as admitted here (a client may follow it)."""

    handle: RunHandle
    spec: RunSpec
    body: RunCreate
    row: RunRow
    """Its `ap_runs` row (for its webhook's outcome)."""


class QueueDrainer:
    """Starts queued runs on this worker: its rows, and others' while it has room."""

    def __init__(self, duck: DuckLM, hub: TaskHub) -> None:
        self._duck = duck
        self._hub = hub
        leases = duck.run_stores.runs.leases
        self.worker_id = leases.worker_id if leases is not None else secrets.token_hex(8)
        """Who takes rows: this process's lease owner id (PostgreSQL), else a random id."""
        self.shared = leases is not None
        """Several workers share the queue (PostgreSQL): room is bounded, rows are taken."""
        self.stale_s = duck.settings.lease_heartbeat_s * STALE_BEATS
        self._held: dict[str, Held] = {}
        self._wake = asyncio.Event()
        self._door: Door | None = None
        self._task: asyncio.Task[None] | None = None
        self._renewed = time.monotonic()

    def room(self) -> int:
        """How many more runs this worker may start (SQLite: no bound)."""
        if not self.shared:
            return UNBOUNDED
        running = len(self._hub.running()) + len(self._held)
        return self._duck.settings.worker_runs - running

    def hold(self, handle: RunHandle, spec: RunSpec, body: RunCreate, row: RunRow) -> None:
        """Keep `handle`'s run, whose row this worker takes as it is written, to start it."""
        self._held[handle.run_id] = Held(handle, spec, body, row)

    def release(self, run_id: str) -> None:
        """Forget a held run (its row was never written, or is gone)."""
        self._held.pop(run_id, None)

    def wake(self) -> None:
        """Look at the queue now (a run was enqueued, or one ended here)."""
        self._wake.set()

    def start(self, door: Door) -> None:
        """Drain `door`'s queue in the background until `close`."""
        self._door = door
        self._task = asyncio.create_task(self._drain_forever(), name="ducklm-run-queue")

    async def close(self) -> None:
        """Stop draining; the rows held here are left for the other workers."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        for held in self._held.values():
            held.handle.started.cancel()  # its followers here end with the server
        self._held.clear()
        if self._door is not None:
            await self._door.queue.release(self.worker_id)

    async def drain(self) -> bool:
        """One pass: start what may start; whether any row could start."""
        door = self._door
        assert door is not None  # started
        self._forget_settled()
        await self._renew(door)
        room = self.room()
        limit = max(room, 0) + len(self._held)
        if limit == 0:  # full: a run ending here wakes the drainer
            return False
        rows = await door.queue.candidates(self.worker_id, limit)
        for row in rows:
            if row.run_id not in self._held:
                if room <= 0:
                    continue
                room -= 1
            await self._start_row(row, door)
        return bool(rows)

    async def _drain_forever(self) -> None:
        while True:
            try:
                found = await self.drain()
            except Exception:  # a database hiccup must not end the drainer
                log.warning("could not drain the run queue", exc_info=True)
                found = False
            with contextlib.suppress(TimeoutError):
                pause = BUSY_POLL_S if found or self._held else IDLE_POLL_S
                await asyncio.wait_for(self._wake.wait(), pause)
            self._wake.clear()

    async def _start_row(self, row: QueuedRun, door: Door) -> None:
        held = self._held.get(row.run_id)  # a cancel deletes its row: `claim` tells
        if held is None:
            held = await self._take(row, door)
            if held is None:
                return
        if self._hub.is_busy(row.thread_id):  # a state update holds it here: next pass
            return
        self.release(row.run_id)
        if not await door.queue.claim(row.run_id, self.worker_id):
            return  # cancelled meanwhile (or taken by another worker after a stall)
        await self._begin(row, held, door)

    async def _take(self, row: QueuedRun, door: Door) -> Held | None:
        """Take a row admitted elsewhere (or before a restart); its run, if it can start."""
        if not await door.queue.take(row.run_id, self.worker_id):
            return None  # another worker took it first
        record = await door.runs.get(row.run_id)
        gone = record is None or record.state != "pending"  # cancelled, or thread deleted
        if gone or (row.starting and await self._began(row)):
            await door.queue.done(row.run_id)  # (a run that began is the reaper's)
            return None
        assert record is not None
        try:
            return await self._rebuild(row, record, door)
        except (HTTPException, ValidationError) as exc:
            await self._refuse(row, _why(exc), door)
            return None

    async def _begin(self, row: QueuedRun, held: Held, door: Door) -> None:
        duck, hub = self._duck, self._hub
        try:
            await begin(held.handle, held.spec, held.body, held.row, duck=duck, hub=hub, door=door)
        except ThreadBusy as exc:
            if self._hub.is_busy(row.thread_id) or not await self._duck.waiting_task(row.thread_id):
                await self._put_back(row, held, door)  # another run got in first: later
                return
            await self._refuse(row, WAITING.format(thread_id=row.thread_id), door, held, exc)
        except (NotWaitingError, DecisionError) as exc:
            await self._refuse(row, str(exc), door, held, exc)
        except Exception as exc:  # its row is gone: said, not left `pending` for ever
            log.exception("queued run %s could not start", row.run_id)
            await self._refuse(row, CANNOT_START, door, held, exc)
        else:  # (a dead taker's starting row is not started again: `_began`)
            await door.queue.done(row.run_id)

    async def _rebuild(self, row: QueuedRun, record: RunRow, door: Door) -> Held:
        """The run of a row admitted elsewhere (or before a restart), from its request."""
        body = RunCreate.model_validate(record.kwargs)
        spec = await queued_run(
            body, row.thread_id, temporary=row.temporary, duck=self._duck, door=door
        )
        spec = named(spec, row.run_id)
        handle = RunHandle(row.run_id, row.thread_id, spec.stream_modes, body.stream_resumable)
        return Held(handle, spec, body, record)

    async def _put_back(self, row: QueuedRun, held: Held, door: Door) -> None:
        if door.streams.get(row.run_id) is held.handle:  # a follower here waits for it
            self._held[row.run_id] = held
        await door.queue.unclaim(row.run_id, self.worker_id)

    async def _began(self, row: QueuedRun) -> bool:
        """Whether a run its dead taker was starting wrote a checkpoint (it began)."""
        found = await self._duck.states.history(
            row.thread_id, metadata={"run_id": row.run_id}, limit=1
        )
        return bool(found)

    async def _refuse(
        self,
        row: QueuedRun,
        why: str,
        door: Door,
        held: Held | None = None,
        exc: Exception | None = None,
    ) -> None:
        """Record that the run can never start, and why; its followers here are told."""
        log.info("queued run %s refused: %s", row.run_id, why)
        await door.runs.set_state(row.run_id, "refused", why)
        await door.queue.done(row.run_id)
        held = self._held.pop(row.run_id, None) or held
        if held is not None and not held.handle.started.done():
            held.handle.started.set_exception(exc or RuntimeError(why))
            held.handle.started.exception()  # a follower may never come: not an unseen error

    async def _renew(self, door: Door) -> None:
        if self._held and time.monotonic() - self._renewed >= self.stale_s / STALE_BEATS:
            await door.queue.renew(self.worker_id)
            self._renewed = time.monotonic()

    def _forget_settled(self) -> None:
        """Drop held runs that settled elsewhere (cancelled while enqueued)."""
        for run_id, held in list(self._held.items()):
            if held.handle.started.done():
                del self._held[run_id]


def _why(exc: HTTPException | ValidationError) -> str:
    if isinstance(exc, HTTPException):
        return str(exc.detail)
    return BAD_REQUEST.format(why=exc.errors()[0]["msg"])
