"""One tick of a cron: a run admitted as any run of the door, or a tick skipped, and why.

A cron's run is the run a `POST /threads/{id}/runs` (or `POST /runs`) with its payload
would make: the same checks (`runs/spec.py`), admission and multitask strategy
(`runs/launch.py`), hub task, bookkeeping, webhook and approval rules. A question it meets
waits for the person like any other (the web chat's approvals page lists it); while it
waits, the cron's next ticks on that thread are skipped, not stacked.

- No overlap: while the run of the cron's last tick has not ended (running, or enqueued
  behind another run of the thread), the tick is skipped and recorded as such.
- A thread-less cron gives each run a new thread. Its thread is kept while the run runs
  and deleted at its end (`on_run_completed: delete`) unless the run stopped at a
  question: then it stays for the person to answer.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from fastapi import HTTPException
from pydantic import ValidationError

from ducklm.runtime.facade import DuckLM
from ducklm.server.agent_protocol.common.deps import Door
from ducklm.server.agent_protocol.common.schemas import RunCreate
from ducklm.server.agent_protocol.runs.launch import admit
from ducklm.server.agent_protocol.runs.lookup import duck_record
from ducklm.server.agent_protocol.runs.spec import stateless_run, thread_run
from ducklm.server.agent_protocol.streaming.joining import RunHandle
from ducklm.server.agent_protocol.threads.catalog import find_thread
from ducklm.server.tasks import TaskHub, ThreadBusy
from ducklm.stores.agent_protocol.crons import CronRow, TickOutcome

log = logging.getLogger(__name__)

STILL_RUNNING = "its last run {run_id} has not ended"
THREAD_GONE = "its thread {thread_id} was deleted: the cron is deleted"
BAD_PAYLOAD = "its run request is not valid: {why}"
END_POLL_S = 0.5
"""How often a thread-less cron run is looked at until it ends (it may run elsewhere)."""


@dataclass(frozen=True)
class Fired:
    """What a tick did: its outcome, the run it started, and why (for a skip or refusal)."""

    outcome: TickOutcome
    run_id: str | None = None
    note: str | None = None


@dataclass
class CronRuns:
    """Fires crons' ticks as runs of the door."""

    duck: DuckLM
    hub: TaskHub
    door: Door
    _cleanups: set[asyncio.Task[None]] = field(default_factory=set)

    async def fire(self, cron: CronRow) -> Fired:
        """Start the run of one tick of `cron`, or say why not."""
        if (
            cron.thread_id
            and await find_thread(cron.thread_id, self.duck, self.door.threads) is None
        ):
            await self.door.crons.delete(cron.cron_id)
            return Fired("refused", note=THREAD_GONE.format(thread_id=cron.thread_id))
        if cron.last_run_id and await self._still_running(cron.last_run_id):
            return Fired("skipped", note=STILL_RUNNING.format(run_id=cron.last_run_id))
        try:
            body = _request(cron)
        except ValidationError as exc:
            return Fired("refused", note=BAD_PAYLOAD.format(why=exc.errors()[0]["msg"]))
        try:
            handle = await self._admit(cron, body)
        except HTTPException as exc:  # what the same request from a client would get
            return Fired("skipped" if exc.status_code == 409 else "refused", note=str(exc.detail))
        except ThreadBusy as exc:
            return Fired("skipped", note=str(exc))
        await self.door.crons.ran(cron.cron_id, handle.run_id)
        if cron.thread_id is None and cron.on_run_completed != "keep":
            self._delete_thread_after(handle)
        return Fired("started", run_id=handle.run_id)

    async def close(self) -> None:
        """Stop waiting to delete thread-less runs' threads (the server is stopping)."""
        for task in list(self._cleanups):
            task.cancel()
        await asyncio.gather(*self._cleanups, return_exceptions=True)

    async def _admit(self, cron: CronRow, body: RunCreate) -> RunHandle:
        modes = body.stream_modes()
        duck, door = self.duck, self.door
        if cron.thread_id is None:
            spec = await stateless_run(body, modes, duck=duck, door=door)
        else:
            spec = await thread_run(cron.thread_id, body, modes, duck=duck, door=door)
        return await admit(spec, body, duck=duck, hub=self.hub, door=door, background=True)

    async def _still_running(self, run_id: str) -> bool:
        handle = self.door.streams.get(run_id)
        if handle is not None and handle.started.done():
            if handle.started.cancelled() or handle.started.exception() is not None:
                return False  # dropped or refused while enqueued: it never ran
            return handle.ended_at is None
        row = await self.door.runs.get(run_id)  # started by another server, maybe
        if row is None or row.duck_run_id is None:
            return row is not None and row.state == "pending"
        record = await duck_record(row.thread_id, row.duck_run_id, self.duck)
        return record is not None and record.status == "running"

    def _delete_thread_after(self, handle: RunHandle) -> None:
        task = asyncio.create_task(
            self._delete_unless_waiting(handle), name=f"ducklm-cron-thread-{handle.thread_id}"
        )
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)

    async def _delete_unless_waiting(self, handle: RunHandle) -> None:
        # Polled, not awaited on the handle: any worker may start the run (the queue),
        # and only the database tells its end there.
        while True:
            if not await self._still_running(handle.run_id):
                break
            await asyncio.sleep(END_POLL_S)
        # else it never started (dropped, refused): its thread goes all the same
        thread_id = handle.thread_id
        if await self.duck.waiting_task(thread_id):
            log.info("cron run %s waits for the person: thread %s kept", handle.run_id, thread_id)
            return
        try:
            async with self.hub.claim(thread_id):
                await self.duck.forget_thread(thread_id)
                await self.door.threads.delete(thread_id)
                await self.door.runs.forget_thread(thread_id)
        except ThreadBusy:
            log.info("cron thread %s is busy again: kept", thread_id)


def _request(cron: CronRow) -> RunCreate:
    """The run request of one tick: the cron's payload, its metadata under the run's."""
    payload = dict(cron.payload)
    payload["metadata"] = {**cron.metadata, **payload.get("metadata", {}), "cron_id": cron.cron_id}
    if cron.thread_id is None:
        payload["on_completion"] = "keep"  # deleted here at its end, unless it waits
    return RunCreate.model_validate(payload)
