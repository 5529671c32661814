"""Crons of the Agent Protocol door, fired by the scheduler on a clock the test moves.

DuckLM's real server on its scripted model. The scheduler's clock is replaced before a
cron is made (`CronScheduler.clock`), so "a minute later" is a number, not a wait; the
scheduler's loop runs as in production beside the test's own `run_due` calls (claims
keep either from firing a tick twice). What each tick did is read from `ap_cron_ticks`.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk.client import LangGraphClient

from ducklm.config.settings import Settings
from ducklm.server.agent_protocol.common.views import iso_time
from ducklm.stores.agent_protocol.crons import TickRow
from tests.support.agent_runs import (
    QUIET,
    RUN_TIMEOUT_S,
    door_of,
    new_thread,
    prompt,
    requests_reach,
)
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served, sdk_client, serve
from tests.support.webhook_receiver import Receiver

EVERY_MINUTE = "* * * * *"
MINUTE = 1_900_000_020.0
"""A minute's start (a multiple of 60), in 2030: the fake clock's first due time."""
OVERWRITE = call("file_write", path="a.txt", content="new", overwrite=True)


class Clock:
    """A clock the test sets."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(served: Served) -> Clock:
    """The scheduler's clock, half a minute before `MINUTE`."""
    fake = Clock(MINUTE - 30)
    door_of(served).scheduler.clock = fake
    return fake


async def fire_at(served: Served, clock: Clock, when: float, cron_id: str) -> list[TickRow]:
    """Move the clock to `when`, let the scheduler look, and return the cron's ticks."""
    clock.now = when
    door = door_of(served)
    await door.scheduler.run_due()
    return await door.crons.ticks(cron_id)


async def thread_cron(
    client: LangGraphClient, thread_id: str, text: str, **options: Any
) -> dict[str, Any]:
    cron: dict[str, Any] = await client.crons.create_for_thread(
        thread_id, "ducklm", schedule=EVERY_MINUTE, input=prompt(text), context=QUIET, **options
    )
    return cron


async def test_a_cron_fires_when_due_and_not_before(
    client: LangGraphClient, served: Served, llm: ScriptedLLM, clock: Clock, receiver: Receiver
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply("Tick."))
    cron = await thread_cron(client, thread_id, "tick", webhook=f"{receiver.url}/cron")
    await fires_on_time(client, served, clock, thread_id, cron)
    # Its webhook, as any run's: the run's outcome once it ended.
    [got] = await receiver.wait_for(1)
    assert (got.path, got.body["status"], got.body["values"]["final"]) == (
        "/cron",
        "success",
        "Tick.",
    )
    assert got.body["metadata"]["cron_id"] == cron["cron_id"]


async def fires_on_time(
    client: LangGraphClient, served: Served, clock: Clock, thread_id: str, cron: dict[str, Any]
) -> None:
    """The cron fires at its minute, not a second before; its run is DuckLM's."""
    assert cron["next_run_date"] == iso_time(MINUTE)

    assert await fire_at(served, clock, MINUTE - 1, cron["cron_id"]) == []
    assert await client.runs.list(thread_id) == []
    [tick] = await fire_at(served, clock, MINUTE, cron["cron_id"])
    assert (tick.outcome, tick.due_at, tick.at, tick.missed) == ("started", MINUTE, MINUTE, 0)

    assert tick.run_id is not None
    assert (await client.runs.join(thread_id, tick.run_id))["final"] == "Tick."
    run = await client.runs.get(thread_id, tick.run_id)
    assert (run["status"], run["metadata"]["cron_id"]) == ("success", cron["cron_id"])
    # DuckLM's bookkeeping, as for any run: a task of the conversation, completed.
    tasks = (await served.client.get("/v1/tasks", params={"conversation_id": thread_id})).json()
    assert [(t["message"], t["status"]) for t in tasks] == [("tick", "completed")]
    again = (await served.client.get(f"/runs/crons/{cron['cron_id']}")).json()
    assert again["next_run_date"] == iso_time(MINUTE + 60)


async def test_a_tick_while_the_last_run_runs_is_skipped(
    client: LangGraphClient, served: Served, llm: ScriptedLLM, clock: Clock
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply("Slow.", delay_s=30), reply("After."))
    cron_id = (await thread_cron(client, thread_id, "work"))["cron_id"]
    [first] = await fire_at(served, clock, MINUTE, cron_id)
    assert first.run_id is not None
    await requests_reach(llm, 1)

    ticks = await fire_at(served, clock, MINUTE + 60, cron_id)
    assert [(t.outcome, t.run_id) for t in ticks] == [("started", first.run_id), ("skipped", None)]
    assert f"its last run {first.run_id} has not ended" == ticks[1].note
    assert [r["run_id"] for r in await client.runs.list(thread_id)] == [first.run_id]

    await client.runs.cancel(thread_id, first.run_id, wait=True)
    third = (await fire_at(served, clock, MINUTE + 120, cron_id))[-1]
    assert third.outcome == "started"
    assert third.run_id is not None
    assert (await client.runs.join(thread_id, third.run_id))["final"] == "After."


async def test_a_question_waits_for_the_person_and_later_ticks_skip(
    client: LangGraphClient, served: Served, llm: ScriptedLLM, clock: Clock, workspace: Path
) -> None:
    target = workspace / "a.txt"
    await asyncio.to_thread(target.write_text, "old")
    thread_id = await new_thread(client)
    llm.script(reply(tool_calls=[OVERWRITE]))
    cron_id = (await thread_cron(client, thread_id, "overwrite a.txt"))["cron_id"]
    [tick] = await fire_at(served, clock, MINUTE, cron_id)
    assert tick.run_id is not None
    await client.runs.join(thread_id, tick.run_id)

    # The question is the person's, on the web chat's approvals page, as for any run.
    pending = (await served.client.get("/v1/approvals/pending")).json()
    assert [(p["conversation_id"], p["kind"]) for p in pending] == [(thread_id, "approval")]
    skipped = (await fire_at(served, clock, MINUTE + 60, cron_id))[-1]
    assert skipped.outcome == "skipped"
    assert "waits for an answer" in (skipped.note or "")
    assert await asyncio.to_thread(target.read_text) == "old"  # nothing done unasked
    assert len(llm.requests) == 1


async def test_a_thread_less_crons_thread_goes_after_its_run(
    client: LangGraphClient, served: Served, llm: ScriptedLLM, clock: Clock
) -> None:
    llm.script(reply("Gone."), reply("Kept."))
    gone = await client.crons.create("ducklm", schedule=EVERY_MINUTE, input=prompt(), context=QUIET)
    kept = await client.crons.create(
        "ducklm", schedule=EVERY_MINUTE, input=prompt(), context=QUIET, on_run_completed="keep"
    )
    assert (gone["thread_id"], gone["on_run_completed"]) == (None, "delete")
    clock.now = MINUTE
    ticks = await door_of(served).scheduler.run_due()
    assert sorted(t.cron_id for t in ticks) == sorted([gone["cron_id"], kept["cron_id"]])
    await requests_reach(llm, 2)

    async def threads_of(cron_id: str) -> list[Any]:
        return await client.threads.search(metadata={"cron_id": cron_id})

    async with asyncio.timeout(RUN_TIMEOUT_S):
        while await threads_of(gone["cron_id"]):  # noqa: ASYNC110  deleted at the run's end
            await asyncio.sleep(0.05)
    [thread] = await threads_of(kept["cron_id"])
    assert (await client.threads.get_state(thread["thread_id"]))["values"]["final"] in {
        "Gone.",
        "Kept.",
    }


async def test_a_cron_with_a_refused_webhook_or_schedule_is_not_made(
    client: LangGraphClient, served: Served
) -> None:
    body = {"assistant_id": "ducklm", "schedule": EVERY_MINUTE, "input": prompt()}
    refused = await served.client.post(
        "/runs/crons", json={**body, "webhook": "http://example.com/hook"}
    )
    assert refused.status_code == 422
    assert "neither loopback nor in DUCK_WEBHOOK_HOSTS" in refused.json()["detail"]
    for bad in ({"schedule": "61 * * * *"}, {"timezone": "Mars/Olympus"}):
        answer = await served.client.post("/runs/crons", json={**body, **bad})
        assert answer.status_code == 422, bad
    assert await client.crons.count() == 0


async def test_a_tick_missed_while_down_runs_once_at_start(
    server_settings: Settings, llm: ScriptedLLM
) -> None:
    async with serve(server_settings) as first, sdk_client(first) as client:
        # Made an hour ago, as far as the cron knows: it was due 60 times since.
        door_of(first).scheduler.clock = Clock(time.time() - 3600)
        thread_id = await new_thread(client)
        cron_id = (await thread_cron(client, thread_id, "catch up"))["cron_id"]
    llm.script(reply("Caught up."))
    async with serve(server_settings) as second, sdk_client(second) as client:
        door = door_of(second)
        async with asyncio.timeout(RUN_TIMEOUT_S):
            while not await door.crons.ticks(cron_id):  # noqa: ASYNC110  the scheduler's start
                await asyncio.sleep(0.05)
        await door.scheduler.run_due()
        [tick] = await door.crons.ticks(cron_id)
        assert tick.outcome == "started"
        assert 58 <= tick.missed <= 61
        assert tick.run_id is not None
        assert (await client.runs.join(thread_id, tick.run_id))["final"] == "Caught up."
        cron = await door.crons.get(cron_id)
        assert cron is not None
        assert cron.next_run_date > time.time() - 1
    assert len(llm.requests) == 1
