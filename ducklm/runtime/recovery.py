"""Startup recovery: runs whose process died are marked interrupted and can be resumed.

Several processes may share a data dir (a CLI beside a server), so a run recorded as
`running` is not dead because this process did not start it. Each run records its owner
(`ducklm.stores.owner`); at startup a run whose owner is gone becomes `interrupted` with the
reason "interrupted by restart", its task too, and its audit log ends with a `done`
event saying so. `DuckLM.continue_run` (`ducklm resume THREAD`,
`POST /v1/tasks/{id}/resume/stream`) goes on from its last checkpoint.

With PostgreSQL (`DUCK_DATABASE_URL`) servers on several machines share the `runs`
table, and a run is owned through its lease instead (`ducklm.stores.leases`): a run
whose lease expired is taken over by any server's reaper (`ducklm.runtime.reaper`),
which goes on with it or closes it here (`close_run`). Only a run without a lease
(started by a DuckLM from before leases) keeps the host rule: a process marks it only
when its owner ran on its own host and is gone.

A dead review run (the critic and memory policy behind an answered turn) is not a turn
to resume: its turn's task keeps its answer and status, and its audit log ends with a
`review_skipped` event saying why.
"""

from __future__ import annotations

import asyncio
import logging

from ducklm.kit.events import done_fields
from ducklm.stores import AuditLog, Database, RunRecord, Runs, RunStores, Tasks
from ducklm.stores.owner import ProcessOwner

log = logging.getLogger(__name__)

INTERRUPTED_BY_RESTART = "interrupted by restart"


async def recover_dead_runs(stores: RunStores) -> list[RunRecord]:
    """Mark every running run whose owner process is gone; return the runs marked."""
    db, runs, tasks, audit = stores.db, stores.runs, stores.tasks, stores.audit
    running = await runs.running()
    if not running:
        return []
    me = runs.owner if runs.owner is not None else await asyncio.to_thread(ProcessOwner.current)
    dead = await asyncio.to_thread(_dead_runs, running, me)
    marked = [run for run in dead if await _mark(run, db, runs, tasks, audit)]
    for run in marked:
        log.warning("run %s on thread %s was %s", run.run_id, run.thread_id, INTERRUPTED_BY_RESTART)
    return marked


def _dead_runs(running: list[tuple[RunRecord, str | None]], me: ProcessOwner) -> list[RunRecord]:
    # A run without an owner was started by a DuckLM from before owners were recorded:
    # no process of this version owns it, so it counts as dead.
    dead = []
    for run, token in running:
        owner = ProcessOwner.parse(token) if token else None
        if owner is None or not owner.is_alive(me):
            dead.append(run)
    return dead


async def _mark(run: RunRecord, db: Database, runs: Runs, tasks: Tasks, audit: AuditLog) -> bool:
    # The run, its task and the closing event land in one transaction.
    async with db.transaction():
        return await _mark_in(run, runs, tasks, audit)


async def _mark_in(run: RunRecord, runs: Runs, tasks: Tasks, audit: AuditLog) -> bool:
    if not await runs.mark_interrupted(run.run_id, INTERRUPTED_BY_RESTART):
        return False
    await close_run(run, tasks, audit, INTERRUPTED_BY_RESTART)
    return True


async def close_run(run: RunRecord, tasks: Tasks, audit: AuditLog, reason: str) -> None:
    """End the task of a dead run (already marked) as `interrupted`, with its closing event.

    A turn's task waits to be resumed (`DuckLM.continue_run`) and its log ends with a
    `done`; a review run's turn keeps its answer and its log says `review_skipped`.
    """
    ids = {"thread_id": run.thread_id, "task_id": run.task_id, "run_id": run.run_id}
    if run.kind == "review":
        closing = {"type": "review_skipped", "reason": reason, **ids}
    else:
        if run.task_id:
            await tasks.set_status(run.task_id, "interrupted", error=reason)
        closing = {"type": "done", **done_fields("interrupted", reason=reason), **ids}
    await audit.append(run.thread_id, run.run_id, closing)
