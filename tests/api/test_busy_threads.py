"""A thread busy with a task refuses a second run with a 409 that names the running task.

Whichever door started the task and whichever asks next: a `/v1` turn blocks (a slow
scripted model) and the official `langgraph-sdk` client asks for a run on its thread,
with new input, with a resume, and with nothing; a `/v1` message asks too. The refusal
says how to wait for the task or cancel it, and doing as it says frees the thread.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import ConflictError

from ducklm.config.settings import Settings
from ducklm.runtime.operator import open_operator_stores
from tests.support.cli import model_reached
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served, sdk_client

QUIET = {"critic": False, "memory": False}
PROMPT = {"messages": [{"role": "user", "content": "and now?"}]}
APPROVE = {"decisions": [{"type": "approve"}]}


@pytest.fixture
async def client(served: Served) -> AsyncIterator[LangGraphClient]:
    async with sdk_client(served) as sdk:
        yield sdk


def assert_names_the_task(detail: str, task_id: str) -> None:
    assert "already running a task" in detail
    assert f"GET /v1/tasks/{task_id}/stream" in detail
    assert f"POST /v1/tasks/{task_id}/cancel" in detail


async def refusal(request: Any) -> str:
    """The 409's detail of an SDK call that must be refused."""
    with pytest.raises(httpx.HTTPStatusError) as refused:
        await request
    assert refused.value.response.status_code == 409
    detail: str = refused.value.response.json()["detail"]
    return detail


async def test_a_run_on_a_thread_busy_with_a_v1_task_is_a_409_naming_it(
    served: Served, client: LangGraphClient, llm: ScriptedLLM
) -> None:
    llm.script(reply("Slow answer.", delay_s=30), reply("After the cancel."))
    body = {"message": "take your time", **QUIET}
    async with served.client.stream("POST", "/v1/chat/stream", json=body) as response:
        started = await _first_event(response.aiter_lines())
        thread_id, task_id = started["thread_id"], started["task_id"]
        await model_reached(llm)  # blocked in its model call

        waited = client.runs.wait(thread_id, "ducklm", input=PROMPT, context=QUIET)
        assert_names_the_task(await refusal(waited), task_id)
        # A resume used to be "not waiting for an answer": true, but not why.
        resumed = client.runs.wait(thread_id, "ducklm", command={"resume": APPROVE})
        assert_names_the_task(await refusal(resumed), task_id)
        assert_names_the_task(await refusal(client.runs.wait(thread_id, "ducklm")), task_id)
        with pytest.raises(ConflictError) as streamed:
            async for _ in client.runs.stream(thread_id, "ducklm", input=PROMPT, context=QUIET):
                pass
        assert task_id in str(streamed.value)
        second = await served.client.post(
            "/v1/chat", json={"message": "hi", "conversation_id": thread_id, **QUIET}
        )
        assert second.status_code == 409
        assert_names_the_task(second.json()["detail"], task_id)

        # As the refusal says: cancel it, and the thread takes the next run.
        cancelled = await served.client.post(f"/v1/tasks/{task_id}/cancel")
        assert cancelled.json() == {"task_id": task_id, "status": "cancelled"}
    values = await client.runs.wait(thread_id, "ducklm", input=PROMPT, context=QUIET)
    assert isinstance(values, dict)
    assert values["final"] == "After the cancel."


async def test_a_thread_another_server_runs_is_a_409_naming_its_task(
    served: Served, client: LangGraphClient, settings: Settings
) -> None:
    thread_id = str((await client.threads.create())["thread_id"])
    # Another server on the same database runs the thread: only its row tells.
    async with open_operator_stores(settings) as other:
        await other.runs.start("run-elsewhere", thread_id, "task-elsewhere")
    waited = client.runs.wait(thread_id, "ducklm", input=PROMPT, context=QUIET)
    assert_names_the_task(await refusal(waited), "task-elsewhere")


async def _first_event(lines: AsyncIterator[str]) -> dict[str, Any]:
    async for line in lines:
        if line.startswith("data:"):
            item: dict[str, Any] = json.loads(line.removeprefix("data:"))
            return item
    raise AssertionError("the stream ended before its first event")
