"""Admitting a run: started now or enqueued (`multitask.py`), recorded once (`run_store.py`).

Every run of the door comes through `admit`, whichever route asked for it (stream,
wait, background, batch): so every one has a row, an id the client can follow, cancel
and join, and the multitask strategy it asked for. The id is minted here, before the
run exists (an enqueued run needs one at once), and goes into the run's metadata, so
its checkpoints carry it; DuckLM's own run id is recorded beside it when it starts. The
run itself is a hub task (`execution.py`), so DuckLM's bookkeeping is that of any run.
A run with a `webhook` has its outcome sent there when it ends (`webhooks/`).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import replace

from fastapi import HTTPException

from ducklm.runtime.facade import DuckLM, NotWaitingError
from ducklm.server.agent_protocol.cancelling import CancelAction, cancel_started, drop_pending
from ducklm.server.agent_protocol.deps import Door
from ducklm.server.agent_protocol.execution import start_run
from ducklm.server.agent_protocol.identity import ASSISTANT_ID
from ducklm.server.agent_protocol.joining import RunHandle
from ducklm.server.agent_protocol.run_lookup import FoundRun
from ducklm.server.agent_protocol.run_spec import RunSpec
from ducklm.server.agent_protocol.run_store import RunRow, RunState
from ducklm.server.agent_protocol.schemas import RunCreate
from ducklm.server.agent_protocol.webhooks.outcome import run_outcome
from ducklm.server.tasks import LiveTask, TaskHub, ThreadBusy
from ducklm.tools.hitl import DecisionError

ENQUEUED_BUSY = (
    "thread {thread_id} has runs enqueued: wait for them, or choose another multitask_strategy"
)


async def admit(
    spec: RunSpec, body: RunCreate, *, duck: DuckLM, hub: TaskHub, door: Door
) -> RunHandle:
    """Start `spec` now, or enqueue it, as `body.multitask_strategy` says for a busy thread.

    Raises:
        HTTPException: 409 for a busy thread the strategy does not make room on (or
            another server's run), 409/422 for what the run's own checks refuse.
    """
    strategy = body.multitask_strategy
    spec = _named(spec, str(uuid.uuid4()))
    if door.queue.busy(spec.thread_id):
        if strategy == "enqueue":
            return await _enqueue(spec, body, duck=duck, hub=hub, door=door)
        if strategy == "reject":
            _refuse_busy(spec.thread_id, hub)
        else:
            await make_room(spec.thread_id, strategy, duck=duck, hub=hub, door=door)
    handle = RunHandle(_run_id(spec), spec.thread_id, spec.stream_modes, body.stream_resumable)
    # Its row first: a thread-less run's thread (and its rows) may go before `add` returns.
    row = _row(handle.run_id, None, spec, body)
    await door.runs.add(row)
    try:
        live = await _start(spec, duck, hub, door)
    except BaseException:
        await door.runs.delete(handle.run_id)  # refused: there is no such run
        raise
    await door.runs.started(handle.run_id, live.run_id)
    _started(handle, live, door)
    _send_webhook(row, live, body, duck, door)
    return handle


async def make_room(
    thread_id: str, action: CancelAction, *, duck: DuckLM, hub: TaskHub, door: Door
) -> None:
    """Cancel the thread's enqueued runs and its running one (`interrupt` or `rollback`)."""
    for pending in door.queue.pending(thread_id):
        await drop_pending(pending, action, door.queue, door.runs)
    try:
        hub.check_free(thread_id)
        return
    except ThreadBusy as busy:
        if busy.task_id is None:  # held by a state update or a delete: a moment's wait
            raise HTTPException(409, str(busy)) from None
    running = [r for r in await duck.runs(thread_id) if r.status == "running"]
    for record in running:
        row = await door.runs.by_duck_run(record.run_id)
        found = FoundRun(row.run_id if row else record.run_id, thread_id, row, record)
        await cancel_started(found, record, action, duck=duck, hub=hub, runs=door.runs)


def _refuse_busy(thread_id: str, hub: TaskHub) -> None:
    try:
        hub.check_free(thread_id)
    except ThreadBusy as exc:
        raise HTTPException(409, str(exc)) from None
    raise HTTPException(409, ENQUEUED_BUSY.format(thread_id=thread_id))


async def _enqueue(
    spec: RunSpec, body: RunCreate, *, duck: DuckLM, hub: TaskHub, door: Door
) -> RunHandle:
    handle = RunHandle(_run_id(spec), spec.thread_id, spec.stream_modes, body.stream_resumable)
    row = _row(handle.run_id, None, spec, body, state="pending")
    await door.runs.add(row)

    async def start() -> LiveTask:
        live = await start_run(spec, duck, hub, forget=door.runs.forget_thread)
        await door.runs.started(handle.run_id, live.run_id)
        _started(handle, live, door)
        _send_webhook(row, live, body, duck, door)
        return live

    async def refused(problem: Exception) -> None:
        await door.runs.set_state(handle.run_id, "refused", str(problem))

    async def waiting() -> bool:
        latest = await duck.tasks(spec.thread_id, limit=1)
        return bool(latest) and latest[0].status == "interrupted"

    door.queue.enqueue(handle, start, waiting, refused)
    door.streams.track(handle)
    return handle


async def _start(spec: RunSpec, duck: DuckLM, hub: TaskHub, door: Door) -> LiveTask:
    try:
        return await start_run(spec, duck, hub, forget=door.runs.forget_thread)
    except (ThreadBusy, NotWaitingError) as exc:
        raise HTTPException(409, str(exc)) from None
    except DecisionError as exc:  # decisions that do not fit the question they answer
        raise HTTPException(422, str(exc)) from None


def _named(spec: RunSpec, run_id: str) -> RunSpec:
    """`spec` with its LangGraph run id in the run's metadata.

    So each checkpoint it writes says which run wrote it (as on the LangGraph server: a
    rollback deletes by it).
    """
    metadata = {**spec.options.metadata, "run_id": run_id}
    return replace(spec, options=replace(spec.options, metadata=metadata))


def _run_id(spec: RunSpec) -> str:
    return str(spec.options.metadata["run_id"])


def _started(handle: RunHandle, live: LiveTask, door: Door) -> None:
    if not handle.started.done():
        handle.started.set_result(live)
    door.streams.track(handle)
    assert live.runner is not None  # set by the hub before `launch` returns
    live.runner.add_done_callback(lambda _: door.streams.ended(handle))


def _send_webhook(row: RunRow, live: LiveTask, body: RunCreate, duck: DuckLM, door: Door) -> None:
    """POST the run's outcome to its webhook once it ends (checked at its creation)."""
    if body.webhook is None:
        return
    started_at = time.time()
    door.webhooks.send_after(
        row.run_id, body.webhook, live.finished, lambda: run_outcome(row, live, duck, started_at)
    )


def _row(
    run_id: str,
    duck_run_id: str | None,
    spec: RunSpec,
    body: RunCreate,
    *,
    state: RunState = "started",
) -> RunRow:
    now = time.time()
    kwargs = body.model_dump(mode="json", exclude_none=True)
    return RunRow(
        run_id,
        spec.thread_id,
        duck_run_id,
        ASSISTANT_ID,  # whichever of its names the client used
        now,
        now,
        state,
        body.metadata or {},
        kwargs,
        body.multitask_strategy,
    )
