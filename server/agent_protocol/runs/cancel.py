"""Cancelling a run by its LangGraph id: `interrupt` keeps what it did, `rollback` undoes it.

As the LangGraph server does (`Runs.cancel`): an `interrupt`ed run stops where it is,
its checkpoints stay and it is listed as `interrupted`; a `rollback` stops it, deletes
its checkpoints (the thread's state is again what it was before the run) and deletes
the run. DuckLM's own records stay either way: the run's row says `cancelled` and the
audit keeps every event, with what its tools did (undo still reaches its file changes).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Literal

from langgraph.checkpoint.base import BaseCheckpointSaver

from ducklm.runtime.facade import DuckLM, NotWaitingError
from ducklm.server.agent_protocol.common.deps import Door
from ducklm.server.agent_protocol.runs.lookup import FoundRun, duck_record
from ducklm.server.tasks import TaskHub, TaskNotFound
from ducklm.stores.agent_protocol.runs import RunRow, RunStore
from ducklm.stores.runs import RunRecord

log = logging.getLogger(__name__)

CancelAction = Literal["interrupt", "rollback"]
ACTIVE = frozenset({"pending", "running"})
"""The statuses (`runs/views.py`) of a run a cancel can stop."""
NOTHING_TO_CANCEL = (
    "No matching runs to cancel. Please verify the thread ID and run IDs are correct, "
    "and the runs haven't been deleted or completed."
)
"""The LangGraph server's words for a cancel of a run that has ended."""
HISTORY_PAGE = 20
"""Checkpoints read at a time looking for the one before a rolled-back run."""
STARTING_POLL_S = 0.05
STARTING_WAIT_S = 5.0
"""How long a cancel waits for a run a worker took from the queue to be recorded."""


async def cancel_started(
    run: FoundRun,
    record: RunRecord,
    action: CancelAction,
    *,
    duck: DuckLM,
    hub: TaskHub,
    runs: RunStore,
) -> None:
    """Stop a started run if it runs; with `rollback`, also delete it and its checkpoints.

    A run that has ended is left as it is by `interrupt`; `rollback` still deletes it.
    """
    if record.status == "running" and record.task_id:
        with contextlib.suppress(TaskNotFound, NotWaitingError):  # it ended meanwhile
            await hub.cancel(record.task_id)
    if action == "rollback":
        if run.row is not None:  # a run of another door has no id in its checkpoints
            await rollback(run.run_id, record.thread_id, duck=duck, hub=hub)
        await forget(run, runs)


async def cancel_found(
    found: FoundRun, action: CancelAction, *, duck: DuckLM, hub: TaskHub, door: Door
) -> None:
    """Cancel a run found pending or running: dropped from the queue, or stopped."""
    if found.record is None:  # enqueued: it never starts (or, just taken, is stopped)
        await cancel_pending(found, action, duck=duck, hub=hub, door=door)
        return
    await cancel_started(found, found.record, action, duck=duck, hub=hub, runs=door.runs)


async def drop_pending(run_id: str, action: CancelAction, door: Door) -> bool:
    """Cancel an enqueued run before it starts: kept as cancelled, or deleted (rollback).

    Its queue row is deleted first, in one statement: no worker starts it afterwards.
    `False` when the row was gone already (a worker has started the run, or is starting it).
    """
    if not await door.queue.remove(run_id):
        return False
    await door.runs.set_state(run_id, "deleted" if action == "rollback" else "cancelled")
    handle = door.streams.get(run_id)
    if handle is not None and not handle.started.done():
        handle.started.cancel()  # its followers here end: it never ran
    return True


async def cancel_pending(
    run: FoundRun, action: CancelAction, *, duck: DuckLM, hub: TaskHub, door: Door
) -> None:
    """Cancel a run that was pending when asked: dropped from the queue, or stopped.

    A worker may have taken it from the queue in the meantime: then it is cancelled as a
    started run once its record exists (a moment later).
    """
    deadline = time.monotonic() + STARTING_WAIT_S
    while time.monotonic() < deadline:
        if await drop_pending(run.run_id, action, door):
            return
        row = await door.runs.get(run.run_id)
        if row is None or row.state in ("refused", "cancelled", "deleted"):
            return
        record = await duck_record(run.thread_id, row.duck_run_id, duck)
        if record is not None:
            started = FoundRun(run.run_id, run.thread_id, row, record)
            await cancel_started(started, record, action, duck=duck, hub=hub, runs=door.runs)
            return
        await asyncio.sleep(STARTING_POLL_S)
    log.warning("run %s was taken from the queue but not recorded: not cancelled", run.run_id)


async def rollback(run_id: str, thread_id: str, *, duck: DuckLM, hub: TaskHub) -> None:
    """Delete the checkpoints the run `run_id` wrote: the thread is as before it.

    A checkpointer that cannot delete by run gets a copy of the state before the run
    as its latest checkpoint instead (the run's checkpoints stay in the history).
    """
    saver = duck.graph.checkpointer
    assert isinstance(saver, BaseCheckpointSaver)  # the facade compiles with one
    async with hub.claim(thread_id):
        try:
            await saver.adelete_for_runs([run_id])
            return
        except NotImplementedError:
            log.info("the checkpointer cannot delete by run: rolling back by a copy")
        before = await _before_run(duck, run_id, thread_id)
        if before is None:  # the run wrote the thread's first checkpoint
            await saver.adelete_thread(thread_id)
        else:
            await duck.update_state(thread_id, None, as_node="__copy__", checkpoint_id=before)


async def forget(run: FoundRun, runs: RunStore) -> None:
    """Delete the run from the door (a run of another door gets a row saying so)."""
    if run.row is None:
        await runs.add(
            RunRow(run.run_id, run.thread_id, run.run_id, "", 0.0, 0.0, "deleted", {}, {}, "")
        )
    await runs.set_state(run.run_id, "deleted")


async def _before_run(duck: DuckLM, run_id: str, thread_id: str) -> str | None:
    """The id of the thread's newest checkpoint the run `run_id` did not write."""
    before = None
    while page := await duck.states.history(thread_id, before=before, limit=HISTORY_PAGE):
        for snapshot in page:
            if (snapshot.metadata or {}).get("run_id") != run_id:
                return str(snapshot.config["configurable"]["checkpoint_id"])
        before = str(page[-1].config["configurable"]["checkpoint_id"])
    return None
