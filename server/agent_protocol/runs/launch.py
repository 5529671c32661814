"""Admitting a run: started now or queued, recorded once (`ducklm/stores/agent_protocol/runs.py`).

Every run of the door comes through `admit`, whichever route asked for it (stream, wait,
background, batch, a cron): so every one has a row, an id the client can follow, cancel and
join, and the multitask strategy it asked for (`runs/multitask.py`). A run with a client
waiting for it (stream, wait) starts at once on the worker that has the client; a background
run goes through the run queue (`ducklm/stores/agent_protocol/run_queue.py`) and is
`pending` until a worker's drainer starts it (`runs/queue_drain.py`), as on the LangGraph
server. When this worker has room, its row is taken by this worker as it is written, so it
starts here at once; else any worker with room takes it. The id is minted here, before the
run exists, and goes into the run's metadata, so its checkpoints carry it; DuckLM's own run
id is recorded beside it when it starts. The run itself is a hub task (`runs/execution.py`),
so DuckLM's bookkeeping is that of any run. A run with a `webhook` has its outcome sent
there when it ends (`webhooks/`).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import replace

from fastapi import HTTPException

from ducklm.runtime.facade import DuckLM, NotWaitingError
from ducklm.server.agent_protocol.common.deps import Door
from ducklm.server.agent_protocol.common.identity import ASSISTANT_ID
from ducklm.server.agent_protocol.common.schemas import RunCreate
from ducklm.server.agent_protocol.runs.execution import start_run
from ducklm.server.agent_protocol.runs.multitask import make_room, refuse_busy, thread_busy
from ducklm.server.agent_protocol.runs.spec import RunSpec
from ducklm.server.agent_protocol.streaming.joining import RunHandle
from ducklm.server.agent_protocol.webhooks.outcome import run_outcome
from ducklm.server.tasks import LiveTask, TaskHub, ThreadBusy
from ducklm.stores.agent_protocol.run_queue import QueuedRun
from ducklm.stores.agent_protocol.runs import RunRow, RunState
from ducklm.tools.hitl import DecisionError


async def admit(
    spec: RunSpec,
    body: RunCreate,
    *,
    duck: DuckLM,
    hub: TaskHub,
    door: Door,
    background: bool = False,
) -> RunHandle:
    """Start `spec` now, or enqueue it, as `body.multitask_strategy` says for a busy thread.

    `background`: no client waits for the run: it goes through the run queue.

    Raises:
        HTTPException: 409 for a busy thread the strategy does not make room on, 409/422
            for what the run's own checks refuse.
    """
    strategy = body.multitask_strategy
    spec = named(spec, str(uuid.uuid4()))
    if await thread_busy(spec.thread_id, duck=duck, hub=hub, door=door):
        if strategy == "enqueue":
            # A waiting client is on this worker: its run starts here. Background runs
            # wait for any worker (SQLite: this one, the only one).
            pinned = not background or not door.drainer.shared
            return await _enqueue(spec, body, door, pinned=pinned)
        elif strategy == "reject":
            await refuse_busy(spec.thread_id, duck=duck, hub=hub, door=door)
        else:
            await make_room(spec.thread_id, strategy, duck=duck, hub=hub, door=door)
    if background:
        return await _enqueue(spec, body, door, pinned=door.drainer.room() > 0)
    handle = RunHandle(_run_id(spec), spec.thread_id, spec.stream_modes, body.stream_resumable)
    # Its row first: a thread-less run's thread (and its rows) may go before `add` returns.
    row = _row(handle.run_id, None, spec, body)
    await door.runs.add(row)
    try:
        await _start(handle, spec, body, row, duck=duck, hub=hub, door=door)
    except BaseException:
        await door.runs.delete(handle.run_id)  # refused: there is no such run
        raise
    return handle


async def begin(
    handle: RunHandle,
    spec: RunSpec,
    body: RunCreate,
    row: RunRow,
    *,
    duck: DuckLM,
    hub: TaskHub,
    door: Door,
) -> LiveTask:
    """Start the admitted run `handle` as a hub task, with its bookkeeping and webhook.

    Raises:
        ThreadBusy: The thread runs, or a new message meets a task waiting for an answer.
        NotWaitingError: A resume of a thread that waits for nothing.
        DecisionError: Decisions that do not fit the question they answer.
    """
    live = await start_run(spec, duck, hub, forget=door.runs.forget_thread)
    await door.runs.started(handle.run_id, live.run_id)
    _started(handle, live, door)
    _send_webhook(row, live, body, duck, door)
    return live


async def _enqueue(spec: RunSpec, body: RunCreate, door: Door, *, pinned: bool) -> RunHandle:
    """Write the run to the queue; `pinned`: taken by this worker as it is written."""
    handle = RunHandle(_run_id(spec), spec.thread_id, spec.stream_modes, body.stream_resumable)
    row = _row(handle.run_id, None, spec, body, state="pending")
    await door.runs.add(row)
    drainer = door.drainer
    if pinned:  # known here before the row exists: this worker's drainer starts it as is
        drainer.hold(handle, spec, body, row)
        door.streams.track(handle)  # so a join or stream here waits for its start
    taken_by = drainer.worker_id if pinned else None
    try:
        await door.queue.add(QueuedRun(handle.run_id, spec.thread_id, spec.temporary, taken_by))
    except BaseException:
        drainer.release(handle.run_id)
        await door.runs.delete(handle.run_id)
        raise
    drainer.wake()
    return handle


async def _start(
    handle: RunHandle,
    spec: RunSpec,
    body: RunCreate,
    row: RunRow,
    *,
    duck: DuckLM,
    hub: TaskHub,
    door: Door,
) -> LiveTask:
    try:
        return await begin(handle, spec, body, row, duck=duck, hub=hub, door=door)
    except (ThreadBusy, NotWaitingError) as exc:
        raise HTTPException(409, str(exc)) from None
    except DecisionError as exc:  # decisions that do not fit the question they answer
        raise HTTPException(422, str(exc)) from None


def named(spec: RunSpec, run_id: str) -> RunSpec:
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
    live.runner.add_done_callback(lambda _: _ended(handle, door))


def _ended(handle: RunHandle, door: Door) -> None:
    door.streams.ended(handle)
    door.drainer.wake()  # a run enqueued behind it (or waiting for room) may start


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
