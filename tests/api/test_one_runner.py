"""One runner behind every door: an Agent Protocol run is a DuckLM task like any other.

Its events are in the audit log (`ducklm events`), `/v1` cancels it, its thread is a
conversation either door goes on with, and a run whose server was killed (`kill -9`) is
marked interrupted by the next server and can be resumed.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.schema import StreamPart

from ducklm.config.settings import Settings
from tests.support.cli import announced_urls, cli_env, model_reached, run_cli
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import TOKEN, Served, sdk_client, serve, stream

QUIET = {"critic": False, "memory": False}
RUN_TIMEOUT_S = 30


def prompt(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


@pytest.fixture
async def client(served: Served) -> AsyncIterator[LangGraphClient]:
    async with sdk_client(served) as sdk:
        yield sdk


async def test_an_agent_protocol_run_is_audited_and_cancelled_through_v1(
    client: LangGraphClient, served: Served, llm: ScriptedLLM, settings: Settings, tmp_path: Path
) -> None:
    thread_id = (await client.threads.create())["thread_id"]
    llm.script(reply("slow " * 40, chunk_delay_s=0.2))
    parts = client.runs.stream(
        thread_id, "ducklm", input=prompt("talk slowly"), stream_mode="custom", context=QUIET
    )
    seen: list[dict[str, Any]] = []
    async with asyncio.timeout(RUN_TIMEOUT_S):
        async for part in parts:
            if isinstance(part, StreamPart) and part.event == "custom":
                seen.append(part.data)
                if part.data["type"] == "token":  # the answer streams: cancel from /v1
                    task_id = part.data["task_id"]
                    cancelled = await served.client.post(f"/v1/tasks/{task_id}/cancel")
                    assert cancelled.json() == {"task_id": task_id, "status": "cancelled"}
    assert seen[0]["type"] == "run_started"
    assert seen[-1]["type"] == "done" and seen[-1]["status"] == "cancelled"

    task = (await served.client.get(f"/v1/tasks/{task_id}")).json()
    assert (task["status"], task["message"], task["conversation_id"]) == (
        "cancelled",
        "talk slowly",
        thread_id,
    )
    audited = (await served.client.get(f"/v1/tasks/{task_id}/events")).json()
    assert audited[0]["type"] == "run_started"
    assert audited[-1]["type"] == "done" and audited[-1]["status"] == "cancelled"
    # The operator's view of the same log, from another process.
    shown = await run_cli("events", thread_id, "--json", env=cli_env(settings), cwd=tmp_path)
    assert shown.code == 0, shown.stderr
    types = [json.loads(line)["type"] for line in shown.stdout.splitlines() if line.strip()]
    assert "run_started" in types and types[-1] == "done"


async def test_one_thread_is_one_conversation_from_either_door(
    client: LangGraphClient, served: Served, llm: ScriptedLLM, settings: Settings, tmp_path: Path
) -> None:
    # Started through langgraph-sdk, continued through /v1 (the web chat's API).
    thread_id = (await client.threads.create())["thread_id"]
    llm.script(reply("First answer."))
    await client.runs.wait(thread_id, "ducklm", input=prompt("first question"), context=QUIET)
    listed = (await served.client.get("/v1/conversations")).json()
    assert [(c["id"], c["title"]) for c in listed] == [(thread_id, "first question")]
    llm.script(reply("Second answer."))
    body = {"message": "second question", "conversation_id": thread_id, **QUIET}
    events = await stream(served, "/v1/chat/stream", body)
    assert events[-1]["answer"] == "Second answer."
    detail = (await served.client.get(f"/v1/conversations/{thread_id}")).json()
    assert [m["content"] for m in detail["messages"]] == [
        "first question",
        "First answer.",
        "second question",
        "Second answer.",
    ]
    threads = await run_cli("threads", "--json", env=cli_env(settings), cwd=tmp_path)
    assert thread_id in threads.stdout

    # Started through /v1, continued through langgraph-sdk.
    llm.script(reply("From the web chat."))
    started = await stream(served, "/v1/chat/stream", {"message": "web question", **QUIET})
    conversation = started[-1]["thread_id"]
    [found] = await client.threads.search(ids=[conversation])
    assert found["metadata"]["graph_id"] == "ducklm"
    llm.script(reply("From the SDK."))
    done = await client.runs.wait(conversation, "ducklm", input=prompt("sdk question"))
    assert isinstance(done, dict)
    assert [m["content"] for m in done["messages"]] == [
        "web question",
        "From the web chat.",
        "sdk question",
        "From the SDK.",
    ]
    tasks = (await served.client.get(f"/v1/tasks?conversation_id={conversation}")).json()
    assert [t["message"] for t in tasks] == ["sdk question", "web question"]


@pytest.mark.slow
async def test_a_run_killed_with_its_server_is_recovered_and_resumed(
    llm: ScriptedLLM, settings: Settings, tmp_path: Path
) -> None:
    env = {**cli_env(settings), "DUCK_API_TOKEN": TOKEN}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ducklm.cli.main", "serve", "--port", "0",
        env=env, cwd=tmp_path, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        url, _ = await asyncio.wait_for(announced_urls(proc.stderr), 60)
        thread_id = await _start_and_kill(proc, url, llm)
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()

    async with serve(settings) as served:  # a new server on the same data
        [task] = (await served.client.get(f"/v1/tasks?conversation_id={thread_id}")).json()
        assert (task["status"], task["error"]) == ("interrupted", "interrupted by restart")
        events = (await served.client.get(f"/v1/tasks/{task['task_id']}/events")).json()
        assert events[-1]["reason"] == "interrupted by restart"
        async with sdk_client(served) as sdk:
            assert (await sdk.threads.get(thread_id))["status"] == "interrupted"
            llm.script(reply("Recovered."))
            done = await sdk.runs.wait(thread_id, "ducklm", context=QUIET)  # no input: go on
        assert isinstance(done, dict)
        assert done["final"] == "Recovered."
        again = (await served.client.get(f"/v1/tasks/{task['task_id']}")).json()
        assert (again["status"], again["answer"]) == ("completed", "Recovered.")


async def _start_and_kill(proc: asyncio.subprocess.Process, url: str, llm: ScriptedLLM) -> str:
    """Start an Agent Protocol run on `ducklm serve`; kill -9 it while the model answers."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    client = await asyncio.to_thread(httpx.AsyncClient, base_url=url, headers=headers, timeout=30)
    async with client:
        thread_id = str((await client.post("/threads", json={})).json()["thread_id"])
        llm.script(reply("too late", delay_s=8))
        body = {"assistant_id": "ducklm", "input": prompt("hello"), "context": QUIET}
        run = asyncio.create_task(client.post(f"/threads/{thread_id}/runs/wait", json=body))
        await model_reached(llm)
        proc.kill()
        await proc.wait()
        with pytest.raises(httpx.HTTPError):
            await run
    return thread_id
