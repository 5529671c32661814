"""Background runs through the official `langgraph-sdk`: create, join, list, get, delete, cancel.

DuckLM's real server on a free port with its scripted model; each run is a hub task, so
its id is DuckLM's run id and its events carry it.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError

from ducklm.server.agent_protocol.common.identity import ASSISTANT_ID
from tests.support.agent_runs import QUIET, human_texts, new_thread, prompt, requests_reach
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served


async def test_a_background_run_is_created_then_joined(
    client: LangGraphClient, llm: ScriptedLLM
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply("Joined.", delay_s=0.3))
    run = await client.runs.create(
        thread_id, "ducklm", input=prompt(), context=QUIET, metadata={"by": "test"}
    )
    assert run["status"] == "pending"
    assert (run["thread_id"], run["assistant_id"]) == (thread_id, ASSISTANT_ID)
    assert run["metadata"] == {"by": "test"}
    assert run["multitask_strategy"] == "reject"

    values = await client.runs.join(thread_id, run["run_id"])
    assert isinstance(values, dict)
    assert values["final"] == "Joined."
    done = await client.runs.get(thread_id, run["run_id"])
    assert done["status"] == "success"
    assert done["kwargs"]["input"] == prompt()
    # Joining an ended run answers at once, with the thread's values.
    assert (await client.runs.join(thread_id, run["run_id"]))["final"] == "Joined."


async def test_runs_are_listed_got_and_deleted(
    client: LangGraphClient, served: Served, llm: ScriptedLLM
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply("One."), reply("Two."), reply("Slow.", delay_s=30))
    first = await client.runs.create(thread_id, "ducklm", input=prompt("1"), context=QUIET)
    await client.runs.join(thread_id, first["run_id"])
    second = await client.runs.create(thread_id, "ducklm", input=prompt("2"), context=QUIET)
    await client.runs.join(thread_id, second["run_id"])

    listed = await client.runs.list(thread_id)
    assert [r["run_id"] for r in listed] == [second["run_id"], first["run_id"]]
    assert {r["status"] for r in listed} == {"success"}
    assert [r["run_id"] for r in await client.runs.list(thread_id, limit=1)] == [second["run_id"]]
    assert await client.runs.list(thread_id, status="error") == []

    await client.runs.delete(thread_id, first["run_id"])
    with pytest.raises(NotFoundError):
        await client.runs.get(thread_id, first["run_id"])
    assert [r["run_id"] for r in await client.runs.list(thread_id)] == [second["run_id"]]
    with pytest.raises(NotFoundError):
        await client.runs.get(thread_id, "00000000-0000-4000-8000-000000000000")

    running = await client.runs.create(thread_id, "ducklm", input=prompt("3"), context=QUIET)
    await requests_reach(llm, 3)
    refused = await served.client.delete(f"/threads/{thread_id}/runs/{running['run_id']}")
    assert refused.status_code == 409
    assert "cancel it before deleting it" in refused.json()["detail"]
    await client.runs.cancel(thread_id, running["run_id"], wait=True)


async def test_a_running_run_is_cancelled_by_its_id(
    client: LangGraphClient, served: Served, llm: ScriptedLLM
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply("Never said.", delay_s=30))
    run = await client.runs.create(thread_id, "ducklm", input=prompt("wait"), context=QUIET)
    await requests_reach(llm, 1)
    assert (await client.runs.get(thread_id, run["run_id"]))["status"] == "running"

    cancelled = await served.client.post(f"/threads/{thread_id}/runs/{run['run_id']}/cancel")
    assert cancelled.status_code == 202
    assert (await client.runs.get(thread_id, run["run_id"]))["status"] == "interrupted"
    assert (await client.threads.get(thread_id))["status"] != "busy"
    # Kept: the run's input is in the thread, and DuckLM's task says it was cancelled.
    state = await client.threads.get_state(thread_id)
    assert human_texts(state["values"]) == ["wait"]
    tasks = (await served.client.get("/v1/tasks", params={"conversation_id": thread_id})).json()
    assert [t["status"] for t in tasks] == ["cancelled"]


async def test_a_rolled_back_run_is_gone_with_its_checkpoints(
    client: LangGraphClient, llm: ScriptedLLM
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply("Kept."), reply("Rolled back.", delay_s=30))
    await client.runs.wait(thread_id, "ducklm", input=prompt("keep"), context=QUIET)
    before = await client.threads.get_state(thread_id)
    run = await client.runs.create(thread_id, "ducklm", input=prompt("undo"), context=QUIET)
    await requests_reach(llm, 2)

    await client.runs.cancel(thread_id, run["run_id"], action="rollback")
    with pytest.raises(NotFoundError):
        await client.runs.get(thread_id, run["run_id"])
    after = await client.threads.get_state(thread_id)
    assert human_texts(after["values"]) == ["keep"]
    assert after["values"]["final"] == "Kept."
    # The state is the one before the run (SQLite's checkpointer cannot delete by run:
    # the pre-run checkpoint is copied forward; `runs/cancel.py` says why).
    assert (after["values"], after["next"]) == (before["values"], before["next"])
    with pytest.raises(httpx.HTTPStatusError):
        await client.runs.join(thread_id, run["run_id"])


async def test_a_batch_of_thread_less_runs(client: LangGraphClient, llm: ScriptedLLM) -> None:
    llm.script(reply("A."), reply("B."))
    runs = await client.runs.create_batch(
        [
            {"assistant_id": "ducklm", "input": prompt("a"), "context": QUIET},
            {
                "assistant_id": "ducklm",
                "input": prompt("b"),
                "context": QUIET,
                "on_completion": "keep",
            },
        ]
    )
    assert [r["status"] for r in runs] == ["pending", "pending"]
    first, kept = runs
    assert first["thread_id"] != kept["thread_id"]
    values = await client.runs.join(kept["thread_id"], kept["run_id"])
    assert isinstance(values, dict)
    assert values["final"] in {"A.", "B."}
    # The first run's thread is temporary: it goes at the run's end; the kept one stays.
    await requests_reach(llm, 2)
    async with asyncio.timeout(30):
        while len(await client.threads.search()) != 1:  # noqa: ASYNC110  polling the server
            await asyncio.sleep(0.05)
    assert [t["thread_id"] for t in await client.threads.search()] == [kept["thread_id"]]
