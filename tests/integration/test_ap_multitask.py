"""Double-texting: a second run on a busy thread, under each `multitask_strategy`.

Through the official `langgraph-sdk`, as LangGraph's own server does them: `reject` is a
409, `enqueue` waits its turn, `interrupt` cancels and keeps the running run, `rollback`
cancels it and deletes it with its checkpoints.
"""

from __future__ import annotations

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError

from tests.support.agent_runs import QUIET, human_texts, new_thread, prompt, requests_reach
from tests.support.scripted_llm import ScriptedLLM, reply


async def busy_thread(client: LangGraphClient, llm: ScriptedLLM, delay_s: float) -> tuple[str, str]:
    """A thread whose first run waits `delay_s` in its model call; (thread, run) ids."""
    thread_id = await new_thread(client)
    llm.script(reply("First.", delay_s=delay_s), reply("Second."))
    run = await client.runs.create(thread_id, "ducklm", input=prompt("first"), context=QUIET)
    await requests_reach(llm, 1)
    return thread_id, run["run_id"]


async def test_reject_refuses_the_second_run(client: LangGraphClient, llm: ScriptedLLM) -> None:
    thread_id, first = await busy_thread(client, llm, delay_s=30)
    with pytest.raises(httpx.HTTPStatusError) as refused:
        await client.runs.create(
            thread_id, "ducklm", input=prompt("second"), multitask_strategy="reject"
        )
    assert refused.value.response.status_code == 409
    assert "already running a task" in refused.value.response.json()["detail"]
    await client.runs.cancel(thread_id, first, wait=True)


async def test_enqueue_runs_the_second_after_the_first(
    client: LangGraphClient, llm: ScriptedLLM
) -> None:
    thread_id, first = await busy_thread(client, llm, delay_s=0.5)
    second = await client.runs.create(
        thread_id, "ducklm", input=prompt("second"), context=QUIET, multitask_strategy="enqueue"
    )
    assert second["status"] == "pending"
    assert (await client.runs.get(thread_id, second["run_id"]))["status"] == "pending"
    values = await client.runs.join(thread_id, second["run_id"])
    assert isinstance(values, dict)
    assert human_texts(values) == ["first", "second"]
    assert values["final"] == "Second."
    assert (await client.runs.get(thread_id, first))["status"] == "success"
    assert (await client.runs.get(thread_id, second["run_id"]))["status"] == "success"


async def test_interrupt_stops_the_first_run_and_keeps_it(
    client: LangGraphClient, llm: ScriptedLLM
) -> None:
    thread_id, first = await busy_thread(client, llm, delay_s=30)
    values = await client.runs.wait(
        thread_id, "ducklm", input=prompt("second"), context=QUIET, multitask_strategy="interrupt"
    )
    assert isinstance(values, dict)
    assert values["final"] == "Second."
    assert human_texts(values) == ["first", "second"]  # the first run's input is kept
    assert (await client.runs.get(thread_id, first))["status"] == "interrupted"


async def test_rollback_deletes_the_first_run(client: LangGraphClient, llm: ScriptedLLM) -> None:
    thread_id, first = await busy_thread(client, llm, delay_s=30)
    values = await client.runs.wait(
        thread_id, "ducklm", input=prompt("second"), context=QUIET, multitask_strategy="rollback"
    )
    assert isinstance(values, dict)
    assert values["final"] == "Second."
    assert human_texts(values) == ["second"]  # as if the first run never was
    with pytest.raises(NotFoundError):
        await client.runs.get(thread_id, first)
    assert [r["status"] for r in await client.runs.list(thread_id)] == ["success"]
