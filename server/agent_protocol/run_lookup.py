"""Finding a run by its LangGraph id, waiting for its end, and what a join answers."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException

from ducklm.runtime.facade import DuckLM
from ducklm.server.agent_protocol.catalog import find_thread, load_view
from ducklm.server.agent_protocol.deps import Door
from ducklm.server.agent_protocol.run_store import RunRow
from ducklm.server.agent_protocol.wire import dumps
from ducklm.server.tasks import TaskHub
from ducklm.stores.runs import RunRecord

NOT_FOUND = "Run with ID {run_id} not found"
POLL_S = 0.1
"""How often a join looks at a run another server runs (only its row tells its end)."""


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
    records = [r for r in await duck.runs(thread_id) if r.run_id == duck_run_id]
    record = records[0] if records and records[0].kind == "turn" else None
    if row is None and record is None:
        raise HTTPException(404, NOT_FOUND.format(run_id=run_id))
    return FoundRun(run_id, thread_id, row, record)


async def wait_end(found: FoundRun, duck: DuckLM, door: Door, hub: TaskHub) -> None:
    """Return once the run has ended (or was cancelled before it started)."""
    handle = door.streams.get(found.run_id)
    if handle is not None:
        try:
            started = await asyncio.shield(handle.started)
        except asyncio.CancelledError:
            if not handle.started.cancelled():
                raise
            return
        except Exception:  # could not start: ended already
            return
        await started.finished.wait()
        return
    record = found.record
    if record is None or record.status != "running" or not record.task_id:
        return
    live = hub.live(record.task_id)
    if live is not None:
        await live.finished.wait()
        return
    await _until_not_running(found, duck)


async def run_result(thread_id: str, duck: DuckLM, door: Door, hub: TaskHub) -> str:
    """What a join answers, as the LangGraph server does.

    The thread's values, its open questions as `__interrupt__`, or its failure as
    `__error__`.
    """
    record = await find_thread(thread_id, duck, door.threads)
    if record is None:  # a thread-less run's thread, gone at its end
        return "{}"
    view = await load_view(record, duck, hub)
    result: Any = view["values"] or {}
    if view["status"] == "error":
        result = {"__error__": view["error"]}
    elif interrupts := [i for items in view["interrupts"].values() for i in items]:
        result = {"__interrupt__": interrupts}
    return dumps(result)


async def _until_not_running(found: FoundRun, duck: DuckLM) -> None:
    while True:  # polling the database: another server's run ends there, unseen here
        await asyncio.sleep(POLL_S)
        records = [r for r in await duck.runs(found.thread_id) if r.run_id == found.run_id]
        if not records or records[0].status != "running":
            return
