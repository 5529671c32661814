"""The crons' tables on SQLite and PostgreSQL: a tick is claimed once across processes.

Two `open_database` calls on one location stand for two servers sharing the database.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from ducklm.config.settings import Settings
from ducklm.stores import Database, open_database
from ducklm.stores.agent_protocol.crons import CronRow, CronStore, TickRow
from tests.support.postgres import on_backend

NOW = 1_900_000_020.0


@pytest.fixture
def settings(settings: Settings, database_url: str | None) -> Settings:
    """Every test here on SQLite, then on PostgreSQL."""
    return on_backend(settings, database_url)


@pytest.fixture
async def db(settings: Settings) -> AsyncIterator[Database]:
    await asyncio.to_thread(settings.data_dir.mkdir, parents=True)
    async with open_database(settings.database_location) as opened:
        yield opened


@pytest.fixture
async def other(settings: Settings, db: Database) -> AsyncIterator[Database]:
    async with open_database(settings.database_location) as opened:
        yield opened


def cron(cron_id: str, *, next_run: float, thread_id: str | None = None) -> CronRow:
    return CronRow(
        cron_id=cron_id,
        assistant_id="assistant",
        thread_id=thread_id,
        on_run_completed=None if thread_id else "delete",
        end_time=None,
        schedule="* * * * *",
        timezone=None,
        created_at=NOW - 100,
        updated_at=NOW - 100,
        payload={"assistant_id": "assistant", "input": {"messages": []}},
        metadata={"kind": "test"},
        enabled=True,
        next_run_date=next_run,
    )


async def test_a_due_tick_is_claimed_by_one_process(db: Database, other: Database) -> None:
    here, there = await CronStore.open(db), await CronStore.open(other)
    await here.add(cron("due", next_run=NOW))
    await here.add(cron("later", next_run=NOW + 60, thread_id="t1"))
    await here.add(replace(cron("off", next_run=NOW - 60), enabled=False))
    assert [c.cron_id for c in await there.due(NOW)] == ["due"]
    assert await there.soonest(NOW) == NOW

    [row] = await here.due(NOW)
    claims = await asyncio.gather(here.claim(row, NOW + 60), there.claim(row, NOW + 60))
    assert sorted(claims) == [False, True]
    assert await here.due(NOW) == []
    assert [
        c.cron_id for c in await there.matching(assistant_id=None, thread_id="t1", enabled=True)
    ] == ["later"]


async def test_rows_and_ticks_round_trip(db: Database) -> None:
    store = await CronStore.open(db)
    row = cron("c1", next_run=NOW)
    await store.add(row)
    assert await store.get("c1") == row
    changed = replace(row, schedule="0 * * * *", enabled=False, end_time=NOW + 5, metadata={})
    await store.replace(changed)
    assert await store.get("c1") == changed
    tick = TickRow("c1", NOW, NOW + 1, "skipped", None, 3, "its last run r1 has not ended")
    await store.record_tick(tick)
    await store.ran("c1", "r2")
    assert await store.ticks("c1") == [tick]
    assert (await store.get("c1")) == replace(changed, last_run_id="r2")
    assert await store.delete("c1")
    assert not await store.delete("c1")
    assert await store.ticks("c1") == [tick]  # the record stays
