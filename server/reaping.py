"""The server's reaper: runs of a dead server go on here (PostgreSQL).

`ducklm.runtime.reaper` takes a run over when its lease expired; this gives it the
server's way to go on (`TaskHub.continue_task`, so the run is a live task here, to be
followed, answered and cancelled like any other) and this server's share of the work:
at most `Settings.worker_runs` runs going on at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from ducklm.runtime.facade import DuckLM, NotWaitingError
from ducklm.runtime.reaper import reap_forever
from ducklm.server.tasks import TaskHub, TaskNotFound, ThreadBusy
from ducklm.stores import RunRecord

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def reaping(duck: DuckLM, hub: TaskHub) -> AsyncIterator[None]:
    """Take over expired runs in the background until the block ends (SQLite: nothing)."""
    stores = duck.run_stores
    if stores.runs.leases is None:  # SQLite: one machine, recovered at start
        yield
        return

    async def go_on(run: RunRecord) -> bool:
        if not run.task_id:
            return False
        try:
            await hub.continue_task(run.task_id)
        except (NotWaitingError, ThreadBusy, TaskNotFound) as why:
            log.warning("run %s cannot go on here: %s", run.run_id, why)
            return False
        return True

    def room() -> int:
        return max(duck.settings.worker_runs - len(hub.running()), 0)

    reaper = asyncio.create_task(reap_forever(stores, go_on, room), name="ducklm-reaper")
    try:
        yield
    finally:
        reaper.cancel()
        await asyncio.gather(reaper, return_exceptions=True)
