"""Finding a run by its LangGraph id, waiting for its end, and what a join answers."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException

from ducklm.runtime.facade import DuckLM
from ducklm.server.agent_protocol.common.deps import Door
from ducklm.server.agent_protocol.common.wire import dumps
from ducklm.server.agent_protocol.streaming.joining import RunHandle
from ducklm.server.agent_protocol.threads.catalog import find_thread, load_view
from ducklm.server.tasks import TaskHub
from ducklm.stores.agent_protocol.runs import RunRow
from ducklm.stores.runs import RunRecord

NOT_FOUND = "Run with ID {run_id} not found"
POLL_S = 0.1
"""How often a join looks at a run another server runs (only its row tells its end)."""
PENDING_POLL_S = 0.25
"""How often a run enqueued elsewhere is looked at (one row by its key) until it starts."""


@dataclass(frozen=True)
class FoundRun:
    """A run of a thread: the door's row, DuckLM's record, or both."""

    run_id: str
    thread_id: str
    row: RunRow | None
    record: RunRecord | None
    """`None` while it is enqueued (or was cancelled before it started)."""


async def find_run(thread_id: str, run_id: str, duck: DuckLM, door: Door) -> FoundRun:
    """The run `run_id` of `thread_id`, or `404` (a deleted or rolled-back run too)."""
    row = await door.runs.get(run_id)
    if row is not None and (row.thread_id != thread_id or row.state == "deleted"):
        raise HTTPException(404, NOT_FOUND.format(run_id=run_id))
    duck_run_id = row.duck_run_id if row is not None else run_id
    record = await duck_record(thread_id, duck_run_id, duck)
    record = record if record is not None and record.kind == "turn" else None
    if row is None and record is None:
        raise HTTPException(404, NOT_FOUND.format(run_id=run_id))
    return FoundRun(run_id, thread_id, row, record)


async def thread_runs(thread_id: str, duck: DuckLM, door: Door) -> list[FoundRun]:
    """The thread's runs, not deleted: the door's (enqueued ones too), other doors' turns."""
    rows = {row.run_id: row for row in await door.runs.for_thread(thread_id)}
    by_duck = {row.duck_run_id: row for row in rows.values() if row.duck_run_id}
    found = []
    for record in await duck.runs(thread_id):
        row = by_duck.get(record.run_id)
        if record.kind == "turn" and (row is None or row.state != "deleted"):
            run_id = row.run_id if row is not None else record.run_id
            found.append(FoundRun(run_id, thread_id, row, record))
    waiting = [r for r in rows.values() if r.duck_run_id is None and r.state != "deleted"]
    return found + [FoundRun(row.run_id, thread_id, row, None) for row in waiting]


async def wait_end(found: FoundRun, duck: DuckLM, door: Door, hub: TaskHub) -> None:
    """Return once the run has ended (or was cancelled before it started).

    A run this worker does not hold is looked at in the database: while enqueued, until
    some worker starts it (or it is cancelled or refused), then until it is not running.
    """
    handle = door.streams.get(found.run_id)
    if handle is not None:
        await _handle_end(handle)
        return
    record = found.record
    if record is None:
        record = await _record_once_started(found, duck, door)
    if record is None or record.status != "running" or not record.task_id:
        return
    live = hub.live(record.task_id)
    if live is not None:
        await live.finished.wait()
        return
    await _until_not_running(found.thread_id, record.run_id, duck)


async def until_started(found: FoundRun, door: Door) -> RunRow | None:
    """The run's row once it is no longer enqueued (`None`: it is gone)."""
    row = found.row
    while row is not None and row.state == "pending":
        await asyncio.sleep(PENDING_POLL_S)
        row = await door.runs.get(found.run_id)
    return row


async def duck_record(thread_id: str, duck_run_id: str | None, duck: DuckLM) -> RunRecord | None:
    """DuckLM's record of its run `duck_run_id` of `thread_id` (`None`: not started).

    One read by its key: joins and followers elsewhere poll it.
    """
    return await duck.run_record(thread_id, duck_run_id) if duck_run_id else None


async def _handle_end(handle: RunHandle) -> None:
    try:
        started = await asyncio.shield(handle.started)
    except asyncio.CancelledError:
        if not handle.started.cancelled():
            raise
        return
    except Exception:  # could not start: ended already
        return
    await started.finished.wait()


async def _record_once_started(found: FoundRun, duck: DuckLM, door: Door) -> RunRecord | None:
    row = await until_started(found, door)
    if row is None or row.state != "started" or row.duck_run_id is None:
        return None  # cancelled or refused while enqueued, or deleted
    return await duck_record(found.thread_id, row.duck_run_id, duck)


async def run_result(thread_id: str, duck: DuckLM, door: Door, hub: TaskHub) -> str:
    """What a join answers, as the LangGraph server does.

    The thread's values, with its open questions as `__interrupt__` beside them (the
    `values` chunk LangGraph streams at an interrupt, which its join answers), or its
    failure as `__error__`.
    """
    record = await find_thread(thread_id, duck, door.threads)
    if record is None:  # a thread-less run's thread, gone at its end
        return "{}"
    view = await load_view(record, duck, hub)
    result: Any = view["values"] or {}
    if view["status"] == "error":
        result = {"__error__": view["error"]}
    elif interrupts := [i for items in view["interrupts"].values() for i in items]:
        result = {**result, "__interrupt__": interrupts}
    return dumps(result)


async def _until_not_running(thread_id: str, duck_run_id: str, duck: DuckLM) -> None:
    # DuckLM's id, not the door's: the door's run ids are not in DuckLM's records.
    while True:  # polling the database: another server's run ends there, unseen here
        await asyncio.sleep(POLL_S)
        record = await duck_record(thread_id, duck_run_id, duck)
        if record is None or record.status != "running":
            return
