"""Double-texting: what a run asked for a busy thread does (`multitask_strategy`).

As the LangGraph server does it (`create_valid_run`, `Runs.cancel`):

- `reject` (the default): `409`, naming the running task.
- `enqueue`: the run is recorded as `pending` in the run queue
  (`ducklm/stores/agent_protocol/run_queue.py`) and starts when the thread is free, after
  the runs enqueued before it (first come, first run), on whichever worker takes it.
- `interrupt`: the running run (and any enqueued one) is cancelled and kept, listed as
  `interrupted`; then the new run starts.
- `rollback`: the running run (and any enqueued one) is cancelled and deleted with its
  checkpoints; then the new run starts.

"Busy" is a run holding the thread on any worker (this hub, or a running turn in
DuckLM's `runs` table for another server's), or a row of the thread in the queue. A
review run behind an answer does not count: it gives way to whatever needs the thread.
"""

from __future__ import annotations

from fastapi import HTTPException

from ducklm.runtime.facade import DuckLM
from ducklm.server.agent_protocol.common.deps import Door
from ducklm.server.agent_protocol.runs.cancel import CancelAction, cancel_started, drop_pending
from ducklm.server.agent_protocol.runs.lookup import FoundRun
from ducklm.server.tasks import TaskHub, ThreadBusy
from ducklm.stores.runs import RunRecord

ENQUEUED_BUSY = (
    "thread {thread_id} has runs enqueued: wait for them, or choose another multitask_strategy"
)


async def thread_busy(thread_id: str, *, duck: DuckLM, hub: TaskHub, door: Door) -> bool:
    """Whether a run holds `thread_id` (here or on another server) or runs wait for it."""
    if hub.is_busy(thread_id) or await door.queue.pending(thread_id):
        return True
    return bool(await _running_turns(thread_id, duck))


async def refuse_busy(thread_id: str, *, duck: DuckLM, hub: TaskHub, door: Door) -> None:
    """`409` naming what holds the thread: its running task, or the runs enqueued on it.

    Returns when nothing holds it any more (its run ended since it was found busy).
    """
    try:
        hub.check_free(thread_id)
    except ThreadBusy as exc:
        raise HTTPException(409, str(exc)) from None
    if running := await _running_turns(thread_id, duck):  # another server's run
        raise HTTPException(409, str(ThreadBusy.running(thread_id, running[-1].task_id)))
    if await door.queue.pending(thread_id):
        raise HTTPException(409, ENQUEUED_BUSY.format(thread_id=thread_id))


async def make_room(
    thread_id: str, action: CancelAction, *, duck: DuckLM, hub: TaskHub, door: Door
) -> None:
    """Cancel the thread's enqueued runs and its running one (`interrupt` or `rollback`)."""
    for run_id in await door.queue.pending(thread_id):
        await drop_pending(run_id, action, door)
    try:
        hub.check_free(thread_id)
    except ThreadBusy as busy:
        if busy.task_id is None:  # held by a state update or a delete: a moment's wait
            raise HTTPException(409, str(busy)) from None
    running = [r for r in await duck.runs(thread_id) if r.status == "running"]
    for record in running:
        row = await door.runs.by_duck_run(record.run_id)
        found = FoundRun(row.run_id if row else record.run_id, thread_id, row, record)
        await cancel_started(found, record, action, duck=duck, hub=hub, runs=door.runs)


async def _running_turns(thread_id: str, duck: DuckLM) -> list[RunRecord]:
    """The thread's running turns (a review behind an answer gives way to a new run)."""
    return await duck.running_turns(thread_id)
