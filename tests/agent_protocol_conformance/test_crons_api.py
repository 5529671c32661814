"""Crons: created for a thread and thread-less, searched, deleted (not waited for)."""

from __future__ import annotations

import uuid

import pytest
from langgraph_sdk.client import LangGraphClient

from .server_under_test import Target
from .streams import hello, new_thread, run_options

NO_CRONS = "no /runs/crons or /threads/{id}/runs/crons"
EVERY_HOUR = "0 * * * *"

pytestmark = pytest.mark.missing_on("ducklm", NO_CRONS)


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
