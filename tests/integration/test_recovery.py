"""Startup recovery in process: a dead owner's run is marked, a live process's is not."""

from __future__ import annotations

import asyncio
import sys

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from ducklm.runtime.operator import open_operator_stores
from ducklm.runtime.recovery import INTERRUPTED_BY_RESTART
from ducklm.stores import Runs, Tasks
from ducklm.stores.owner import ProcessOwner
from tests.support.postgres import on_backend


@pytest.fixture
def settings(settings: Settings, database_url: str | None) -> Settings:
    """Recovery on both backends."""
    return on_backend(settings, database_url)


async def _dead_owner() -> ProcessOwner:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await proc.wait()
    me = await asyncio.to_thread(ProcessOwner.current)
    return ProcessOwner(me.host, me.boot_id, proc.pid, 1)


async def _start(duck: DuckLM, owner: ProcessOwner, run_id: str) -> None:
    runs = Runs(duck.database, owner=owner)
    async with duck.database.transaction():
        await runs.start(run_id, f"thread-{run_id}", f"task-{run_id}")
        await Tasks(duck.database).start(f"task-{run_id}", f"thread-{run_id}", "hello")


async def test_only_runs_of_dead_processes_are_marked(settings: Settings) -> None:
    async with DuckLM.open(settings) as live:
        me = await asyncio.to_thread(ProcessOwner.current)
        await _start(live, me, "alive")
        await _start(live, await _dead_owner(), "dead")
        # A worker on another machine sharing the database: only its own host may judge.
        await _start(live, ProcessOwner("other-host", "other-boot", me.pid + 1, 1), "remote")
        # What a second process opens at start (one DuckLM per process: Qdrant's lock).
        async with open_operator_stores(settings):
            pass
        alive = await live.task("task-alive")
        remote = await live.task("task-remote")
        dead = await live.task("task-dead")
        assert alive is not None and alive.status == "running"
        assert remote is not None and remote.status == "running"
        assert dead is not None
        assert (dead.status, dead.error) == ("interrupted", INTERRUPTED_BY_RESTART)
        (run,) = await live.runs("thread-dead")
        assert run.status == "interrupted"
        events = await live.events("thread-dead")
        assert [e.data.get("reason") for e in events] == [INTERRUPTED_BY_RESTART]
