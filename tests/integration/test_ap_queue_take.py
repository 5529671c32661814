"""The run queue's table on real SQLite and real PostgreSQL: one taker per row, fair order.

Two openings of one database play two workers: racing for a row, only one takes it;
a row whose taker stopped renewing is takeable again; only the oldest row of a thread
with no running run is a candidate, oldest thread first.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from ducklm.stores import Database
from ducklm.stores.agent_protocol.run_queue import QueuedRun, RunQueue
from ducklm.stores.backend import open_database
from tests.support.postgres import fresh_schema, require_postgres

STALE_S = 0.3
RACES = 20


@dataclass(frozen=True)
class Workers:
    """Two openings of one database, each with the queue on it."""

    dbs: list[Database]
    queues: list[RunQueue]


@pytest.fixture(params=["sqlite", "postgres"])
async def workers(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Workers]:
    """Two workers' openings of one database (a file, or a fresh PostgreSQL schema)."""
    async with AsyncExitStack() as stack:
        if request.param == "sqlite":
            location: Path | str = tmp_path / "ducklm.db"
        else:
            location = await stack.enter_async_context(fresh_schema(require_postgres()))
        dbs = [await stack.enter_async_context(open_database(location)) for _ in range(2)]
        yield Workers(dbs, [await RunQueue.open(db, STALE_S) for db in dbs])


async def test_two_takers_racing_for_a_row_one_wins(workers: Workers) -> None:
    a, b = workers.queues
    for n in range(RACES):
        await a.add(QueuedRun(f"run-{n}", f"thread-{n}", temporary=False))
        won = await asyncio.gather(a.take(f"run-{n}", "worker-a"), b.take(f"run-{n}", "worker-b"))
        assert sorted(won) == [False, True], won
        winner, loser = ("worker-a", "worker-b") if won[0] else ("worker-b", "worker-a")
        assert not await b.claim(f"run-{n}", loser)
        assert await a.claim(f"run-{n}", winner)  # its run is the winner's to start
        assert not await a.claim(f"run-{n}", winner)  # once
        await b.done(f"run-{n}")
    assert await a.depth() == 0


async def test_a_stale_take_is_taken_again_and_a_renewed_one_is_not(workers: Workers) -> None:
    a, b = workers.queues
    await a.add(QueuedRun("dead-run", "thread-dead", temporary=False, taken_by="dead"))
    await a.add(QueuedRun("live-run", "thread-live", temporary=True, taken_by="live"))
    assert not await b.take("dead-run", "worker-b")
    await asyncio.sleep(STALE_S / 2)
    await a.renew("live")
    await asyncio.sleep(STALE_S / 2 + 0.1)  # "dead" stopped renewing: past its staleness
    assert await b.take("dead-run", "worker-b")
    assert not await b.take("live-run", "worker-b")
    assert not await a.remove("gone")
    assert await a.remove("live-run")  # a cancel: no worker starts it afterwards
    assert not await a.claim("live-run", "live")
    assert await b.claim("dead-run", "worker-b")
    assert not await a.remove("dead-run")  # starting: a cancel waits for the run instead


async def test_only_the_oldest_row_of_a_free_thread_is_a_candidate(workers: Workers) -> None:
    a, b = workers.queues
    for run_id, thread_id in (("first", "t1"), ("second", "t1"), ("other", "t2")):
        await a.add(QueuedRun(run_id, thread_id, temporary=False))
    assert [r.run_id for r in await b.candidates("worker-b", 10)] == ["first", "other"]
    assert [r.run_id for r in await b.candidates("worker-b", 1)] == ["first"]
    db = workers.dbs[0]
    await db.execute(
        "INSERT INTO runs (run_id, thread_id, status, started_at) VALUES (?, ?, 'running', ?)",
        ("running-1", "t1", time.time()),
    )
    assert [r.run_id for r in await b.candidates("worker-b", 10)] == ["other"]
    await db.execute("UPDATE runs SET status = 'completed' WHERE run_id = 'running-1'")
    assert await b.take("first", "worker-b") and await b.claim("first", "worker-b")
    # Starting, "first" still holds its thread's place: "second" cannot start before it.
    assert [r.run_id for r in await a.candidates("worker-a", 10)] == ["other"]
    await b.done("first")
    assert [r.run_id for r in await a.candidates("worker-a", 10)] == ["second", "other"]
    assert await a.pending("t1") == ["second"]
