"""Chat, tasks, approvals and cancellation through the HTTP API."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

from ducklm.config.settings import Settings
from ducklm.runtime.operator import open_operator_stores
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served, sse_events, stream

OVERWRITE = call("file_write", path="a.txt", content="new", overwrite=True)
QUIET = {"critic": False, "memory": False}


async def _existing(workspace: Path) -> Path:
    target = workspace / "a.txt"
    await asyncio.to_thread(target.write_text, "old")
    return target


async def _read(path: Path) -> str:
    return await asyncio.to_thread(path.read_text)


async def test_chat_waits_for_the_answer(served: Served, llm: ScriptedLLM) -> None:
    llm.script(reply("Quack."))
    response = await served.client.post("/v1/chat", json={"message": "hi", **QUIET})
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "completed"
    assert body["answer"] == "Quack."
    task = (await served.client.get(f"/v1/tasks/{body['task_id']}")).json()
    assert task["status"] == "completed"
    assert task["message"] == "hi"
    assert task["conversation_id"] == body["conversation_id"]
    conversations = (await served.client.get("/v1/conversations")).json()
    assert [c["id"] for c in conversations] == [body["conversation_id"]]
    assert conversations[0]["title"] == "hi"


async def test_stream_names_events_by_type_and_streams_tokens(
    served: Served, llm: ScriptedLLM
) -> None:
    llm.script(reply("Hello there, duck."))
    events = await stream(served, "/v1/chat/stream", {"message": "hi", **QUIET})
    types = [e["type"] for e in events]
    assert types[0] == "run_started"
    assert types[-1] == "done"
    assert "".join(e["text"] for e in events if e["type"] == "token") == "Hello there, duck."
    assert {e["task_id"] for e in events} == {events[0]["task_id"]}


async def test_approval_pauses_then_continue_runs_the_tool(
    served: Served, llm: ScriptedLLM, workspace: Path
) -> None:
    target = await _existing(workspace)
    llm.script(reply(tool_calls=[OVERWRITE]))
    events = await stream(served, "/v1/chat/stream", {"message": "overwrite a.txt", **QUIET})
    asked = next(e for e in events if e["type"] == "approval_requested")
    assert events[-1]["status"] == "interrupted"
    task_id = asked["task_id"]
    pending = (await served.client.get("/v1/approvals/pending")).json()
    assert [p["id"] for p in pending] == [asked["interrupt_id"]]
    assert await _read(target) == "old"

    llm.script(reply("Overwritten."))
    body = {"decisions": [{"type": "approve"}], "interrupt_id": asked["interrupt_id"]}
    rest = await stream(served, f"/v1/tasks/{task_id}/continue/stream", body)
    assert rest[-1]["status"] == "completed"
    assert rest[-1]["answer"] == "Overwritten."
    assert {e["task_id"] for e in rest} == {task_id}
    assert await _read(target) == "new"
    # The same question answered twice: refused, and nothing runs again.
    again = await served.client.post(f"/v1/tasks/{task_id}/continue/stream", json=body)
    assert again.status_code == 409
    assert "not waiting" in again.json()["detail"]
    assert (await served.client.get("/v1/approvals/pending")).json() == []


async def test_approvals_page_answers_deny_and_allow_forever(
    served: Served, llm: ScriptedLLM, workspace: Path
) -> None:
    target = await _existing(workspace)
    llm.script(reply(tool_calls=[OVERWRITE]), reply("Left alone."))
    first = (await served.client.post("/v1/chat", json={"message": "go", **QUIET})).json()
    (question,) = first["pending"]
    answered = await served.client.post(f"/v1/approvals/{question['interrupt_id']}/deny")
    assert answered.status_code == 200
    assert await _finished(served, first["task_id"]) == "completed"
    assert await _read(target) == "old"

    llm.script(reply(tool_calls=[OVERWRITE]), reply("Done."))
    second = (await served.client.post("/v1/chat", json={"message": "go", **QUIET})).json()
    (question,) = second["pending"]
    await served.client.post(f"/v1/approvals/{question['interrupt_id']}/allow_forever")
    assert await _finished(served, second["task_id"]) == "completed"
    assert await _read(target) == "new"
    (rule,) = (await served.client.get("/v1/approvals/rules")).json()
    assert rule["tool"] == "file_write"
    assert (await served.client.delete(f"/v1/approvals/rules/{rule['id']}")).status_code == 204
    assert (await served.client.get("/v1/approvals/rules")).json() == []
    assert (await served.client.delete(f"/v1/approvals/rules/{rule['id']}")).status_code == 404


async def test_cancel_stops_a_running_task(served: Served, llm: ScriptedLLM) -> None:
    llm.script(reply("slow " * 50, chunk_delay_s=0.05))
    async with served.client.stream(
        "POST", "/v1/chat/stream", json={"message": "take your time", **QUIET}
    ) as response:
        lines = response.aiter_lines()
        task_id = await _first_task_id(lines)
        cancelled = await served.client.post(f"/v1/tasks/{task_id}/cancel")
        assert cancelled.json() == {"task_id": task_id, "status": "cancelled"}
        rest = [line async for line in lines]
    assert any('"status": "cancelled"' in line for line in rest)
    task = (await served.client.get(f"/v1/tasks/{task_id}")).json()
    assert task["status"] == "cancelled"
    assert (await served.client.post(f"/v1/tasks/{task_id}/cancel")).status_code == 409


async def test_a_disconnected_client_leaves_the_run_going(served: Served, llm: ScriptedLLM) -> None:
    llm.script(reply("answer " * 20, chunk_delay_s=0.02))
    async with served.client.stream(
        "POST", "/v1/chat/stream", json={"message": "hi", **QUIET}
    ) as response:
        task_id = await _first_task_id(response.aiter_lines())
    # Gone mid-run; the task finishes anyway and a reload sees the answer.
    assert await _finished(served, task_id) == "completed"
    task = (await served.client.get(f"/v1/tasks/{task_id}")).json()
    assert task["answer"] == "answer " * 20
    conversation = (await served.client.get(f"/v1/conversations/{task['conversation_id']}")).json()
    assert conversation["messages"][-1]["role"] == "assistant"
    assert conversation["active_task"] is None
    async with served.client.stream("GET", f"/v1/tasks/{task_id}/stream") as replay:
        events = await sse_events(replay)
    assert events[-1]["type"] == "done"


async def test_reload_mid_run_follows_the_live_task(served: Served, llm: ScriptedLLM) -> None:
    llm.script(reply("one two three four five", chunk_delay_s=0.05))
    async with served.client.stream(
        "POST", "/v1/chat/stream", json={"message": "count", **QUIET}
    ) as response:
        task_id = await _first_task_id(response.aiter_lines())
    task = (await served.client.get(f"/v1/tasks/{task_id}")).json()
    conversation = (await served.client.get(f"/v1/conversations/{task['conversation_id']}")).json()
    assert conversation["active_task"]["task_id"] == task_id
    async with served.client.stream("GET", f"/v1/tasks/{task_id}/stream") as live:
        events = await sse_events(live)
    assert events[0]["type"] == "run_started"  # replayed from the start
    assert "".join(e["text"] for e in events if e["type"] == "token") == "one two three four five"
    assert events[-1]["status"] == "completed"


async def test_a_second_message_while_one_runs_is_refused(served: Served, llm: ScriptedLLM) -> None:
    llm.script(reply("slow " * 20, chunk_delay_s=0.05))
    async with served.client.stream(
        "POST", "/v1/chat/stream", json={"message": "first", **QUIET}
    ) as response:
        task_id = await _first_task_id(response.aiter_lines())
        task = (await served.client.get(f"/v1/tasks/{task_id}")).json()
        second = await served.client.post(
            "/v1/chat", json={"message": "second", "conversation_id": task["conversation_id"]}
        )
        assert second.status_code == 409
        assert "already running" in second.json()["detail"]
        await served.client.post(f"/v1/tasks/{task_id}/cancel")


async def _first_task_id(lines: AsyncIterator[str]) -> str:
    async for line in lines:
        if line.startswith("data:"):
            return str(json.loads(line.removeprefix("data:"))["task_id"])
    raise AssertionError("the stream ended before its first event")


async def _finished(served: Served, task_id: str) -> str:
    for _ in range(500):
        status = (await served.client.get(f"/v1/tasks/{task_id}")).json()["status"]
        if status not in {"running"}:
            return str(status)
        await asyncio.sleep(0.02)
    raise AssertionError(f"task {task_id} did not finish")


async def test_following_a_continued_task_shows_its_earlier_runs_too(
    served: Served, llm: ScriptedLLM, workspace: Path
) -> None:
    await _existing(workspace)
    llm.script(reply(tool_calls=[OVERWRITE]))
    first = (await served.client.post("/v1/chat", json={"message": "go", **QUIET})).json()
    task_id, (asked,) = first["task_id"], first["pending"]
    llm.script(reply("written now", chunk_delay_s=0.05))
    body = {"decisions": [{"type": "approve"}], "interrupt_id": asked["interrupt_id"]}
    async with served.client.stream(
        "POST", f"/v1/tasks/{task_id}/continue/stream", json=body
    ) as response:
        await _first_task_id(response.aiter_lines())
        # Answered, so no longer pending, though the run has only just begun.
        assert (await served.client.get("/v1/approvals/pending")).json() == []
        async with served.client.stream("GET", f"/v1/tasks/{task_id}/stream") as follow:
            events = await sse_events(follow)
    types = [e["type"] for e in events]
    assert types.count("run_started") == 2  # the run that asked, and the one answering
    assert "approval_requested" in types
    assert types.index("approval_requested") < types.index("tool_call_finished")
    assert "".join(e["text"] for e in events if e["type"] == "token") == "written now"
    assert events[-1]["status"] == "completed"


async def test_a_thread_another_server_runs_is_refused_as_busy(
    served: Served, settings: Settings
) -> None:
    # Another server on the same database runs the thread (this one's busy set is empty):
    # its running run in the table is what tells.
    async with open_operator_stores(settings) as other:
        await other.runs.start("run-elsewhere", "shared-thread", "task-elsewhere")
    response = await served.client.post(
        "/v1/chat/stream", json={"message": "hi", "conversation_id": "shared-thread", **QUIET}
    )
    assert response.status_code == 409
    assert "already running a task" in response.json()["detail"]
    # Nothing was left behind: no task of this request, and the thread is free here.
    tasks = await served.client.get("/v1/tasks", params={"conversation_id": "shared-thread"})
    assert [t["task_id"] for t in tasks.json()] == []
