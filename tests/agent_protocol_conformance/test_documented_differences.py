"""Where DuckLM answers differently from LangGraph's server on purpose, one case each.

Each case checks the reference behaviour on a `langgraph` target and DuckLM's on a
`ducklm` one, and its docstring says why DuckLM differs. Nothing else in the suite
branches on the dialect: everywhere else both must pass the same checks.
"""

from __future__ import annotations

import json

import httpx
from langgraph_sdk.client import LangGraphClient

from .server_under_test import Target
from .streams import (
    collect,
    data_of,
    hello,
    interrupts_of,
    last_ai_text,
    new_thread,
    overwrite,
    run_options,
    run_status_becomes,
    slowly,
    thread_status_leaves,
)

SERVER_INTERNALS = {"langgraph_api_url", "langgraph_host", "langgraph_plan", "run_attempt"}
"""What LangGraph's server says of itself in every event's `metadata`."""
CHECKPOINT_KEYS = {"thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map"}
SYNTHETIC = "Successfully handled tool call."
"""What agent-chat-ui sends as the pending tool call's answer when the person types on."""


async def _paused(client: LangGraphClient, target: Target) -> tuple[str, str]:
    """A thread waiting for approval of a tool call, and that call's id."""
    thread_id = await new_thread(client)
    parts = await collect(
        client.runs.stream(
            thread_id,
            target.assistant,
            input=overwrite(),
            stream_mode="updates",
            **run_options(target),
        )
    )
    assert interrupts_of(parts)
    state = await client.threads.get_state(thread_id)
    [pending] = state["values"]["messages"][-1]["tool_calls"]
    return thread_id, pending["id"]


async def test_a_synthetic_tool_answer_to_a_pending_approval(
    client: LangGraphClient, http: httpx.AsyncClient, target: Target
) -> None:
    """New input that answers the paused tool call itself.

    LangGraph's server runs any new input on an interrupted thread: the question is
    dropped, and the made-up tool message stands as the tool's result. DuckLM refuses it
    (409 naming the tool) because the approval is the person's: a client typing on must
    not pass for a "yes" to an action the person never approved.
    """
    thread_id, call_id = await _paused(client, target)
    body = {
        "assistant_id": target.assistant,
        "input": {
            "messages": [
                {
                    "type": "tool",
                    "tool_call_id": call_id,
                    "name": "file_write",
                    "content": SYNTHETIC,
                },
                {"type": "human", "content": "hello again"},
            ]
        },
        **run_options(target),
    }
    response = await http.post(f"/threads/{thread_id}/runs/wait", json=body)
    if target.dialect == "ducklm":
        assert response.status_code == 409, response.text
        assert "file_write" in response.json()["detail"]
        assert (await client.threads.get(thread_id))["status"] == "interrupted"
        return
    assert response.status_code == 200, response.text
    assert last_ai_text(response.json()) == "Hello back: hello again"
    messages = (await client.threads.get_state(thread_id))["values"]["messages"]
    assert [m["content"] for m in messages if m["type"] == "tool"] == [SYNTHETIC]


async def test_a_resume_when_nothing_waits(
    client: LangGraphClient, http: httpx.AsyncClient, target: Target
) -> None:
    """`Command(resume=...)` on a thread that waits for no answer.

    LangGraph's server starts the run anyway and it ends at once with the state as it
    was. DuckLM answers 409 "nothing to resume": a resume is an answer to a question,
    and one that answers nothing is a client's mistake worth saying.
    """
    thread_id = await new_thread(client)
    body = {"assistant_id": target.assistant, "command": {"resume": target.approve}}
    response = await http.post(f"/threads/{thread_id}/runs/wait", json=body)
    if target.dialect == "ducklm":
        assert response.status_code == 409, response.text
        assert "nothing to resume" in response.json()["detail"]
        return
    assert response.status_code == 200, response.text


async def test_a_webhook_on_this_machine(
    client: LangGraphClient, http: httpx.AsyncClient, target: Target
) -> None:
    """A run whose `webhook` is a loopback URL.

    LangGraph's server refuses loopback webhooks by default (422): on a hosted server a
    client-chosen loopback URL reaches the server's own private routes. DuckLM is the
    person's own local server, so this machine is where its webhooks usually go: it takes
    loopback URLs (http or https), and refuses any other host unless the person allowed
    it (`DUCK_WEBHOOK_HOSTS`, https only).
    """
    thread_id = await new_thread(client)
    body = {
        "assistant_id": target.assistant,
        "input": hello(),
        "webhook": "http://127.0.0.1:9/run-done",  # the discard port: nothing listens
        **run_options(target),
    }
    response = await http.post(f"/threads/{thread_id}/runs/wait", json=body)
    if target.dialect == "ducklm":
        assert response.status_code == 200, response.text
        assert last_ai_text(response.json()).startswith("Hello back")
        return
    assert response.status_code == 422, response.text
    assert "webhook" in response.json()["detail"].lower()


async def test_what_events_and_debug_say_of_the_server(
    client: LangGraphClient, target: Target
) -> None:
    """The `metadata` of `events` and of `debug` tasks, and a checkpoint's `config`.

    LangGraph's server puts itself in them: its URL, host, plan and version, the request's
    id, the signed-in user, the run's attempt, and the run's context mirrored into
    `configurable`. DuckLM's say what the run is (graph, assistant, run and thread ids, the
    client's metadata) and what LangGraph adds (node, step, path...), nothing more: it has
    no hosts, plans or users to report, and its per-run context (settings, stores, the
    vault that holds a sudo password) goes to the graph beside the config, never in it,
    so no event or checkpoint can carry it, nor the token the client sent.
    """
    thread_id = await new_thread(client)
    parts = await collect(
        client.runs.stream(
            thread_id,
            target.assistant,
            input=hello(),
            stream_mode=["events", "debug"],
            **run_options(target),
        )
    )
    run_id = parts[0].data["run_id"]
    events = data_of(parts, "events")
    assert all(e["metadata"]["run_id"] == run_id for e in events)
    assert all(e["metadata"]["thread_id"] == thread_id for e in events)
    checkpoints = [c["payload"] for c in data_of(parts, "debug") if c["type"] == "checkpoint"]
    configurable = {key for c in checkpoints for key in c["config"]["configurable"]}
    if target.dialect == "ducklm":
        assert not [e for e in events if SERVER_INTERNALS & set(e["metadata"])]
        assert configurable <= CHECKPOINT_KEYS
        sent = json.dumps([part.data for part in parts])
        assert all(value.split()[-1] not in sent for value in target.headers.values())
        return
    assert all(set(e["metadata"]) >= SERVER_INTERNALS for e in events)
    assert "langgraph_request_id" in configurable


async def test_cancel_many_by_thread_alone(
    client: LangGraphClient, http: httpx.AsyncClient, target: Target
) -> None:
    """`POST /runs/cancel` with a `thread_id` and no `run_ids`.

    LangGraph's server needs both (or a status) and refuses it. DuckLM cancels every
    pending or running run of the thread: what a client stopping a conversation means.
    """
    thread_id = await new_thread(client)
    run = await client.runs.create(
        thread_id, target.assistant, input=slowly(), **run_options(target)
    )
    await run_status_becomes(client, thread_id, run["run_id"], {"running"})
    response = await http.post("/runs/cancel", json={"thread_id": thread_id})
    if target.dialect == "ducklm":
        assert response.status_code == 204, response.text
        await run_status_becomes(client, thread_id, run["run_id"], {"interrupted"})
        return
    assert response.status_code >= 400, response.text
    await client.runs.cancel(thread_id, run["run_id"], wait=True)
    await thread_status_leaves(client, thread_id, "busy")
