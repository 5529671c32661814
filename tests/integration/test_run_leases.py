"""Run leases on PostgreSQL: renewed while the owner lives, taken over once when it does not."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from ducklm.runtime.reaper import LEASE_LOST, reap, take_over
from ducklm.stores import RunRecord, RunStores
from ducklm.stores.backend import open_database
from ducklm.stores.owner import ProcessOwner
from tests.support.postgres import fresh_schema, require_postgres

BEAT_S = 0.1  # expiry after three of these


@pytest.fixture
async def url() -> AsyncIterator[str]:
    """A fresh schema on the test server."""
    async with fresh_schema(require_postgres()) as fresh:
        yield fresh


@asynccontextmanager
async def _worker(url: str) -> AsyncIterator[RunStores]:
    """One process's stores on `url`, with leases that expire after three beats."""
    owner = await asyncio.to_thread(ProcessOwner.current)
    async with open_database(url) as db:
        yield RunStores.on(db, owner, heartbeat_s=BEAT_S)


async def _start(stores: RunStores, name: str) -> None:
    async with stores.db.transaction():
        await stores.tasks.start(f"task-{name}", f"thread-{name}", "hello")
        await stores.runs.start(f"run-{name}", f"thread-{name}", f"task-{name}")


async def test_a_renewed_lease_holds_and_an_expired_one_is_taken_once(url: str) -> None:
    async with (
        _worker(url) as dead,
        _worker(url) as live,
        _worker(url) as reaper_a,
        _worker(url) as reaper_b,
    ):
        await _start(dead, "dead")
        await _start(live, "live")
        for _ in range(5):  # well past the expiry: only `live` beats
            await asyncio.sleep(BEAT_S)
            assert await live.runs.leases.renew() == ["run-live"]  # type: ignore[union-attr]
        taken = await asyncio.gather(take_over(reaper_a, 10), take_over(reaper_b, 10))
        runs = [run.run_id for batch in taken for run, _ in batch]
        assert runs == ["run-dead"]  # one reaper, once; the live run stays its owner's
        assert await dead.runs.leases.renew() == []  # type: ignore[union-attr]
        record = await live.runs.get("run-dead")
        assert record is not None and (record.status, record.error) == ("interrupted", LEASE_LOST)
        task = await live.tasks.get("task-dead")
        assert task is not None and task.status == "interrupted"
        assert (await live.runs.get("run-live")).status == "running"  # type: ignore[union-attr]


async def test_a_run_that_cannot_go_on_is_closed_like_after_a_restart(url: str) -> None:
    async with _worker(url) as dead, _worker(url) as reaper:
        await _start(dead, "lost")
        await asyncio.sleep(BEAT_S * 4)
        asked: list[RunRecord] = []

        async def refuse(run: RunRecord) -> bool:
            asked.append(run)
            return False

        assert [r.run_id for r in await reap(reaper, refuse, 10)] == ["run-lost"]
        assert [r.run_id for r in asked] == ["run-lost"]
        events = await reaper.audit.list("thread-lost")
        assert [(e.data["type"], e.data["reason"]) for e in events] == [("done", LEASE_LOST)]
        assert await reap(reaper, refuse, 10) == []  # nothing left to take
