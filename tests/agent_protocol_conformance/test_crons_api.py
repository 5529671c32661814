"""Crons: created for a thread and thread-less, got, updated, searched, counted, deleted.

None is waited for: an hourly schedule is created and deleted within seconds.
"""

from __future__ import annotations

import uuid

import httpx
from langgraph_sdk.client import LangGraphClient

from .server_under_test import Target
from .streams import hello, new_thread, run_options

EVERY_HOUR = "0 * * * *"
EVERY_DAY = "0 9 * * *"


async def test_cron_for_a_thread_search_and_delete(client: LangGraphClient, target: Target) -> None:
    thread_id = await new_thread(client)
    cron = await client.crons.create_for_thread(
        thread_id, target.assistant, schedule=EVERY_HOUR, input=hello(), **run_options(target)
    )
    cron_id = cron["cron_id"]
    assert cron["thread_id"] == thread_id
    assert cron["schedule"] == EVERY_HOUR
    found = await client.crons.search(thread_id=thread_id)
    assert [c["cron_id"] for c in found] == [cron_id]
    await client.crons.delete(cron_id)
    assert await client.crons.search(thread_id=thread_id) == []


async def test_a_thread_less_cron(client: LangGraphClient, target: Target) -> None:
    tag = uuid.uuid4().hex
    cron = await client.crons.create(
        target.assistant,
        schedule=EVERY_HOUR,
        input=hello(),
        metadata={"suite": tag},
        **run_options(target),
    )
    assert cron["schedule"] == EVERY_HOUR
    assert cron["cron_id"] in [
        c["cron_id"]
        for c in await client.crons.search(assistant_id=cron["assistant_id"], limit=100)
    ]
    await client.crons.delete(cron["cron_id"])


async def test_a_cron_is_got_updated_and_counted(client: LangGraphClient, target: Target) -> None:
    thread_id = await new_thread(client)
    cron = await client.crons.create_for_thread(
        thread_id,
        target.assistant,
        schedule=EVERY_HOUR,
        input=hello(),
        metadata={"kind": "hourly"},
        **run_options(target),
    )
    assert await client.crons.count(thread_id=thread_id) == 1
    assert cron["enabled"] is True
    assert cron["next_run_date"]

    updated = await client.crons.update(cron["cron_id"], schedule=EVERY_DAY, enabled=False)
    assert (updated["schedule"], updated["enabled"]) == (EVERY_DAY, False)
    assert updated["next_run_date"] != cron["next_run_date"]
    assert updated["metadata"] == {"kind": "hourly"}
    found = await client.crons.search(thread_id=thread_id, enabled=False)
    assert [c["cron_id"] for c in found] == [cron["cron_id"]]
    assert await client.crons.search(thread_id=thread_id, enabled=True) == []
    assert await client.crons.count(thread_id=thread_id, metadata={"kind": "daily"}) == 0
    await client.crons.delete(cron["cron_id"])
    assert await client.crons.count(thread_id=thread_id) == 0


async def test_cron_errors(http: httpx.AsyncClient, target: Target) -> None:
    thread_id = str(uuid.uuid4())
    body = {"assistant_id": target.assistant, "schedule": EVERY_HOUR, "input": hello()}
    missing = await http.post(f"/threads/{thread_id}/runs/crons", json=body)
    assert missing.status_code == 404
    bad = await http.post("/runs/crons", json={**body, "schedule": "every hour"})
    assert bad.status_code == 422
    assert "schedule" in bad.json()["detail"].lower()
    gone = await http.delete(f"/runs/crons/{uuid.uuid4()}")
    assert gone.status_code == 404
