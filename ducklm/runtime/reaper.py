"""The reaper: a run whose lease expired is taken over and goes on (PostgreSQL).

Every `ducklm serve` on PostgreSQL reaps every heartbeat. A pass takes over, in one
transaction, the runs whose lease expired (their process died, hung, or lost the
database for three heartbeats): each run is ended as `interrupted` and its task waits
to be continued. Concurrent reapers never take the same run (`RunLeases.take_expired`).
Then each taken turn goes on from its last checkpoint through `go_on` (the server's
`TaskHub.continue_task`, so it is a live task there like any other): a tool call that
was mid-execution when the process died reports "outcome unknown" and is never run
again, exactly as `DuckLM.continue_run` after a restart. A turn that cannot go on
(it waits at a question, has nothing left to run, or a cancel was asked for), and a
review run, is closed as startup recovery closes it (`recovery.close_run`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from ducklm.runtime.recovery import close_run
from ducklm.stores import RunRecord, Runs, RunStores
from ducklm.stores.leases import LEASE_LOST as LEASE_LOST  # noqa: PLC0414  re-exported

log = logging.getLogger(__name__)

GoOn = Callable[[RunRecord], Awaitable[bool]]
"""Continue a taken-over turn; `False` when it cannot go on."""
Room = Callable[[], int]
"""How many more runs this process may take now (its share of the work)."""


async def take_over(stores: RunStores, limit: int) -> list[tuple[RunRecord, bool]]:
    """End up to `limit` runs whose lease expired; each with whether a cancel was asked."""
    leases = stores.runs.leases
    if leases is None or limit < 1:
        return []
    columns = f"{Runs.COLUMNS}, cancel_requested IS NOT NULL"
    async with stores.db.transaction():
        rows = await leases.take_expired(columns, LEASE_LOST, limit)
        taken = [(RunRecord(*row[:-1]), bool(row[-1])) for row in rows]
        for run, _ in taken:
            if run.kind == "turn" and run.task_id:
                await stores.tasks.set_status(run.task_id, "interrupted", error=LEASE_LOST)
    return taken


async def reap(stores: RunStores, go_on: GoOn, limit: int) -> list[RunRecord]:
    """One pass: take over expired runs and continue them (or close them); the runs taken."""
    taken = await take_over(stores, limit)
    for run, cancel_asked in taken:
        log.warning("run %s of thread %s: %s; taken over", run.run_id, run.thread_id, LEASE_LOST)
        if run.kind == "turn" and not cancel_asked and await _went_on(go_on, run):
            continue
        async with stores.db.transaction():
            await close_run(run, stores.tasks, stores.audit, LEASE_LOST)
    return [run for run, _ in taken]


async def reap_forever(stores: RunStores, go_on: GoOn, room: Room) -> None:
    """`reap` every heartbeat until cancelled; a failed pass is logged and retried."""
    leases = stores.runs.leases
    if leases is None:
        return
    while True:
        await asyncio.sleep(leases.heartbeat_s)
        try:
            await reap(stores, go_on, room())
        except Exception:  # a database hiccup must not end the reaper
            log.warning("could not reap runs with expired leases", exc_info=True)


async def _went_on(go_on: GoOn, run: RunRecord) -> bool:
    try:
        return await go_on(run)
    except Exception:
        log.exception("run %s could not go on after its take-over", run.run_id)
        return False
