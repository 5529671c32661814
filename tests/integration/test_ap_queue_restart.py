"""A run waiting in the run queue outlives its server (SQLite, one process).

The queue is a table, not a list in the process: a run enqueued behind a busy thread
when the server stops starts when the server is back, once.
"""

from __future__ import annotations

from ducklm.config.settings import Settings
from tests.support.agent_runs import QUIET, prompt, requests_reach, status_becomes
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import sdk_client, serve


async def test_an_enqueued_run_starts_after_a_restart(settings: Settings, llm: ScriptedLLM) -> None:
    llm.script(reply("First.", delay_s=30), reply("Second."))
    body = {"assistant_id": "ducklm", "context": QUIET}
    async with serve(settings) as first:
        thread = (await first.client.post("/threads", json={})).json()["thread_id"]
        runs = f"/threads/{thread}/runs"
        await first.client.post(runs, json={**body, "input": prompt("first")})
        await requests_reach(llm, 1)
        queued = await first.client.post(
            runs, json={**body, "input": prompt("second"), "multitask_strategy": "enqueue"}
        )
        run_id = queued.json()["run_id"]
    # Stopped: its running run was cancelled; the enqueued one was left in the table.
    async with serve(settings) as second, sdk_client(second) as client:
        await status_becomes(client, thread, run_id, "success")
        state = (await second.client.get(f"/threads/{thread}/state")).json()
    assert [m["content"] for m in state["values"]["messages"] if m["type"] == "human"] == [
        "first",
        "second",
    ]
    assert state["values"]["final"] == "Second."
    assert len(llm.requests) == 2  # the second started once
