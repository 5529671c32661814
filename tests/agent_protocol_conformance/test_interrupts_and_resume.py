"""Interrupts: where they show (stream, values, state, thread, search) and the resume.

`Command(resume=...)` by a stream and by `runs/wait` (with the empty `input` beside it
that agent-chat-ui sends), and `interrupt_before` followed by a run without input.
"""

from __future__ import annotations

from typing import Any

import httpx
from langgraph_sdk.client import LangGraphClient

from .server_under_test import Target
from .streams import (
    INTERRUPT,
    collect,
    data_of,
    hello,
    interrupts_of,
    last_ai_text,
    new_thread,
    overwrite,
    run_options,
)


async def test_an_interrupt_shows_everywhere_and_a_resume_goes_on(
    client: LangGraphClient, target: Target
) -> None:
    thread_id = await new_thread(client)
    parts = await collect(
        client.runs.stream(
            thread_id,
            target.assistant,
            input=overwrite(),
            stream_mode=["values", "updates"],
            **run_options(target),
        )
    )
    [interrupt] = interrupts_of(parts)
    assert {"id", "value"} <= set(interrupt)
    assert isinstance(interrupt["id"], str) and interrupt["id"]
    [paused] = [v for v in data_of(parts, "values") if INTERRUPT in v]
    assert paused[INTERRUPT] == [interrupt], "values carries the interrupt too"
    await _shows_the_question(client, thread_id, interrupt)

    resumed = await collect(
        client.runs.stream(
            thread_id,
            target.assistant,
            command={"resume": target.approve},
            stream_mode=["values", "updates"],
        )
    )
    assert interrupts_of(resumed) == []
    final = data_of(resumed, "values")[-1]
    assert INTERRUPT not in final
    assert [m["type"] for m in final["messages"]][-2:] == ["tool", "ai"]
    state = await client.threads.get_state(thread_id)
    assert state["next"] == []
    assert state["interrupts"] == []
    assert (await client.threads.get(thread_id))["status"] == "idle"


async def _shows_the_question(
    client: LangGraphClient, thread_id: str, interrupt: dict[str, Any]
) -> None:
    """The thread shows the interrupt per task, for the thread, as its status, in search."""
    state = await client.threads.get_state(thread_id)
    assert state["next"], "the interrupted node is next"
    [shown] = state["interrupts"]
    _same_question(shown, interrupt)
    [task] = [t for t in state["tasks"] if t["interrupts"]]
    assert task["interrupts"] == [shown]
    thread = await client.threads.get(thread_id)
    assert thread["status"] == "interrupted"
    assert thread["interrupts"] == {task["id"]: [shown]}
    found = await client.threads.search(ids=[thread_id], status="interrupted")
    assert [t["thread_id"] for t in found] == [thread_id]


def _same_question(shown: dict[str, Any], streamed: dict[str, Any]) -> None:
    """The state's interrupt is the streamed one: same id, and the value streamed.

    Only the id and the streamed value's keys are compared: the reference streams a
    `response_schema` the state leaves out, and DuckLM's state adds the agent-inbox keys.
    """
    assert shown["id"] == streamed["id"]
    value = streamed["value"]
    if isinstance(value, dict):
        assert {k: shown["value"].get(k) for k in value} == value
    else:
        assert shown["value"] == value


async def test_wait_returns_the_interrupt_and_a_resume_beside_empty_input(
    client: LangGraphClient, http: httpx.AsyncClient, target: Target
) -> None:
    thread_id = await new_thread(client)
    paused = await client.runs.wait(
        thread_id, target.assistant, input=overwrite(), **run_options(target)
    )
    assert isinstance(paused, dict)
    [interrupt] = paused[INTERRUPT]
    assert interrupt["value"]
    # agent-chat-ui resumes with `{"input": {}, "command": {...}}`: the command wins.
    body = {"assistant_id": target.assistant, "input": {}, "command": {"resume": target.approve}}
    response = await http.post(f"/threads/{thread_id}/runs/wait", json=body)
    assert response.status_code == 200, response.text
    done = response.json()
    assert INTERRUPT not in done
    assert [m["type"] for m in done["messages"]][-2:] == ["tool", "ai"]
    assert (await client.threads.get(thread_id))["status"] == "idle"


async def test_interrupt_before_then_go_on_without_input(
    client: LangGraphClient, target: Target
) -> None:
    thread_id = await new_thread(client)
    await client.runs.wait(
        thread_id, target.assistant, input=hello(), interrupt_before="*", **run_options(target)
    )
    state = await client.threads.get_state(thread_id)
    assert state["next"], "stopped before a node"
    assert state["interrupts"] == []
    assert (await client.threads.get(thread_id))["status"] == "interrupted"
    done = await client.runs.wait(thread_id, target.assistant, input=None, **run_options(target))
    assert isinstance(done, dict)
    assert last_ai_text(done).startswith("Hello back")
    assert (await client.threads.get(thread_id))["status"] == "idle"


async def test_resume_without_a_thread_is_refused(http: httpx.AsyncClient, target: Target) -> None:
    response = await http.post(
        "/runs/wait", json={"assistant_id": target.assistant, "command": {"resume": "yes"}}
    )
    assert response.status_code in {400, 422}, response.text
    assert isinstance(response.json()["detail"], str)
