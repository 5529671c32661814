"""The cron scheduler: a task of the server's lifespan that fires due crons' ticks.

It wakes when the soonest cron is due (at most every `POLL_S`, so crons another server
wrote are seen; at once when a route changes one), claims each due cron by moving its
`next_run_date` on (`CronStore.claim`: never twice across servers), fires it
(`firing.py`) and records the tick.

Missed runs: a cron whose ticks fell due while no server ran (DuckLM was down, the
machine slept) runs once when the scheduler next looks, not once per missed tick; the
tick records how many it stood for (`missed`), and its next run is the first one after
now. The clock is `clock` (Unix seconds), replaceable so a test can move time on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace

from ducklm.server.agent_protocol.crons.firing import CronRuns
from ducklm.server.agent_protocol.crons.schedule import (
    ScheduleError,
    load_zone,
    missed_between,
    next_time,
)
from ducklm.stores.agent_protocol.crons import CronRow, CronStore, TickRow

log = logging.getLogger(__name__)

POLL_S = 30.0
MIN_SLEEP_S = 0.05
RETRY_S = 5.0


class CronScheduler:
    """Fires the due crons of `store` through `runs`, on `clock`."""

    def __init__(self, store: CronStore, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock
        self._runs: CronRuns | None = None
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self, runs: CronRuns) -> None:
        """Start firing through `runs` (the door's runs), in the background."""
        self._runs = runs
        self._task = asyncio.create_task(self._loop(), name="ducklm-cron-scheduler")

    def wake(self) -> None:
        """Look at the crons again now (one was created or changed, or the clock moved)."""
        self._wake.set()

    async def run_due(self) -> list[TickRow]:
        """Fire every cron due now, once each; what each tick did."""
        async with self._lock:
            now = self.clock()
            ticks = []
            for cron in await self.store.due(now):
                tick = await self._tick(cron, now)
                if tick is not None:
                    ticks.append(tick)
            return ticks

    async def close(self) -> None:
        """Stop the scheduler (the server is stopping); runs it started are the hub's."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._runs is not None:
            await self._runs.close()

    async def _tick(self, cron: CronRow, now: float) -> TickRow | None:
        try:
            zone = await load_zone(cron.timezone)
        except ScheduleError as exc:  # checked at creation: gone from this machine's tzdata
            log.warning("cron %s disabled: %s", cron.cron_id, exc)
            await self.store.replace(replace(cron, enabled=False, updated_at=time.time()))
            return None
        if not await self.store.claim(cron, next_time(cron.schedule, now, zone)):
            return None  # another scheduler fired this tick
        missed = missed_between(cron.schedule, cron.next_run_date, now, zone)
        if missed:
            log.info("cron %s missed %d ticks: it runs once now", cron.cron_id, missed)
        assert self._runs is not None  # started before the loop runs
        fired = await self._runs.fire(cron)
        if fired.outcome != "started":
            log.info("cron %s tick %s: %s", cron.cron_id, fired.outcome, fired.note)
        tick = TickRow(
            cron.cron_id, cron.next_run_date, now, fired.outcome, fired.run_id, missed, fired.note
        )
        await self.store.record_tick(tick)
        return tick

    async def _loop(self) -> None:
        while True:
            self._wake.clear()  # before looking: a wake while it looks is not lost
            try:
                await self.run_due()
                wait = await self._until_next()
            except Exception:  # a database hiccup must not end the scheduler
                log.exception("the cron scheduler failed; it tries again in %g s", RETRY_S)
                wait = RETRY_S
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=wait)

    async def _until_next(self) -> float:
        soonest = await self.store.soonest(self.clock())
        if soonest is None:
            return POLL_S
        return min(POLL_S, max(MIN_SLEEP_S, soonest - self.clock()))
