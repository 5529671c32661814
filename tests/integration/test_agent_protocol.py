"""The Agent Protocol door, driven by the official `langgraph-sdk` over real HTTP.

DuckLM's own app is served on a free loopback port with its scripted model server; the
SDK goes through a thread's life, streamed runs in every supported mode, an approval
interrupt and its resume, `runs/wait`, state and history, and the bad inputs. Where the
LangGraph server has an exact wire shape (interrupts, errors), the test compares with
what the installed `langgraph_api` itself would send.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph.types import Interrupt
from langgraph_api.serde import json_dumpb
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import ConflictError, NotFoundError, UnprocessableEntityError
from langgraph_sdk.schema import StreamPart, StreamPartV2

from ducklm.config.settings import Settings
from ducklm.server.agent_protocol.assistants.routes import ASSISTANT_ID
from tests.support.fake_sudo import PASSWORD
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served

RUN_TIMEOUT_S = 30
QUIET = {"critic": False, "memory": False}
ANSWER = "Hello there, duck."
OVERWRITE = call("file_write", path="a.txt", content="new", overwrite=True)


def prompt(text: str = "hi") -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


@pytest.fixture
async def existing(workspace: Path) -> Path:
    target = workspace / "a.txt"
    await asyncio.to_thread(target.write_text, "old")
    return target


async def collect(parts: AsyncIterator[StreamPart | StreamPartV2]) -> list[StreamPart]:
    """Every part of a (v1) stream, within the run timeout."""
    async with asyncio.timeout(RUN_TIMEOUT_S):
        return [part async for part in parts if isinstance(part, StreamPart)]


def data_of(parts: list[StreamPart], event: str) -> list[Any]:
    return [part.data for part in parts if part.event == event]


async def status_leaves(client: LangGraphClient, thread_id: str, status: str) -> Any:
    """The thread once its status is no longer `status`."""
    async with asyncio.timeout(RUN_TIMEOUT_S):
        # Polling the server over HTTP: there is no event to await.
        while (thread := await client.threads.get(thread_id))["status"] == status:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    return thread


async def new_thread(client: LangGraphClient) -> str:
    return str((await client.threads.create())["thread_id"])


async def test_info_and_the_one_assistant(client: LangGraphClient, served: Served) -> None:
    info = (await served.client.get("/info")).json()
    assert info["flags"]["assistants"] is True
    assert info["flags"]["crons"] is True  # served: server/agent_protocol/crons/
    assert info["langgraph_py_version"]

    [found] = await client.assistants.search()
    assert found["graph_id"] == "ducklm"
    assert found["assistant_id"] == ASSISTANT_ID
    # The id `langgraph dev` gives the same graph's system assistant:
    # uuid5(langgraph_api.graph.NAMESPACE_GRAPH, "ducklm").
    assert ASSISTANT_ID == "a2276556-af71-52fc-85bc-4fe5c0608d06"
    with pytest.raises(NotFoundError):
        await client.assistants.search(graph_id="other")
    assert (await client.assistants.get("ducklm"))["assistant_id"] == ASSISTANT_ID
    assert (await client.assistants.get(ASSISTANT_ID))["graph_id"] == "ducklm"
    with pytest.raises(NotFoundError):
        await client.assistants.get("someone-else")


async def test_the_token_is_required(served: Served) -> None:
    response = await served.client.post("/threads", json={}, headers={"Authorization": ""})
    assert response.status_code == 401


async def test_thread_create_get_search_update_delete(client: LangGraphClient) -> None:
    thread = await client.threads.create(metadata={"owner": "ada", "tags": ["x", "y"]})
    thread_id = thread["thread_id"]
    assert thread["status"] == "idle"
    assert thread["metadata"] == {"owner": "ada", "tags": ["x", "y"]}
    assert thread["values"] is None
    assert thread["interrupts"] == {}
    assert thread["created_at"] == thread["updated_at"]
    other = await client.threads.create()

    assert (await client.threads.get(thread_id))["metadata"]["owner"] == "ada"
    found = await client.threads.search(metadata={"owner": "ada"})
    assert [t["thread_id"] for t in found] == [thread_id]
    assert [t["thread_id"] for t in await client.threads.search(metadata={"tags": ["y"]})] == [
        thread_id
    ]
    idle = await client.threads.search(status="idle")
    assert {t["thread_id"] for t in idle} == {thread_id, other["thread_id"]}
    assert await client.threads.search(status="busy") == []
    assert len(await client.threads.search(limit=1)) == 1
    only_ids = await client.threads.search(ids=[other["thread_id"]], select=["thread_id"])
    assert only_ids == [{"thread_id": other["thread_id"]}]

    with pytest.raises(ConflictError):
        await client.threads.create(thread_id=thread_id)
    same = await client.threads.create(thread_id=thread_id, if_exists="do_nothing")
    assert same["metadata"]["owner"] == "ada"
    updated = await client.threads.update(thread_id, metadata={"owner": "grace"})
    assert updated["metadata"] == {"owner": "grace", "tags": ["x", "y"]}

    await client.threads.delete(thread_id)
    with pytest.raises(NotFoundError):
        await client.threads.get(thread_id)
    with pytest.raises(NotFoundError):
        await client.threads.delete(thread_id)
    assert [t["thread_id"] for t in await client.threads.search()] == [other["thread_id"]]


async def test_a_streamed_run_in_every_mode(client: LangGraphClient, llm: ScriptedLLM) -> None:
    thread_id = await new_thread(client)
    llm.script(reply(ANSWER))
    created: list[dict[str, Any]] = []
    parts = await collect(
        client.runs.stream(
            thread_id,
            "ducklm",
            input=prompt(),
            stream_mode=["values", "updates", "messages-tuple", "custom"],
            context=QUIET,
            on_run_created=created.append,
        )
    )
    assert parts[0].event == "metadata"
    run_id = parts[0].data["run_id"]
    assert created == [{"run_id": run_id, "thread_id": thread_id}]
    assert {p.event for p in parts} == {"metadata", "values", "updates", "messages", "custom"}

    # values: the whole state after each step, ending with the answer.
    final = data_of(parts, "values")[-1]
    assert [m["type"] for m in final["messages"]] == ["human", "ai"]
    assert final["messages"][-1]["content"] == ANSWER
    assert final["final"] == ANSWER
    # updates: one per node that ran (`context` also routes and recalls: one task).
    nodes = [name for update in data_of(parts, "updates") for name in update]
    assert {"context", "action"} <= set(nodes)
    assert not {"route", "recall"} & set(nodes)
    # messages-tuple: [chunk, metadata] per token, the answer's chunks from `action`.
    tuples = data_of(parts, "messages")
    assert all(isinstance(t, list) and len(t) == 2 for t in tuples)
    answer_chunks = [c for c, meta in tuples if meta["langgraph_node"] == "action"]
    assert all(c["type"] == "AIMessageChunk" for c in answer_chunks)
    assert "".join(c["content"] for c in answer_chunks) == ANSWER
    # custom: DuckLM's own events from the nodes' stream writer.
    custom = data_of(parts, "custom")
    assert "".join(e["text"] for e in custom if e["type"] == "token") == ANSWER
    # The route (and a plan's events, when there is one) arrive the same way.
    (route,) = [e for e in custom if e["type"] == "route_decided"]
    assert route["plan"] is False and len(route["reasons"]) == 4

    thread = await client.threads.get(thread_id)
    assert thread["status"] == "idle"
    assert thread["metadata"]["graph_id"] == "ducklm"
    assert thread["metadata"]["assistant_id"] == ASSISTANT_ID
    assert thread["values"]["final"] == ANSWER


async def test_messages_mode_accumulates_each_message(
    client: LangGraphClient, llm: ScriptedLLM
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply(ANSWER))
    parts = await collect(
        client.runs.stream(
            thread_id, "ducklm", input=prompt(), stream_mode="messages", context=QUIET
        )
    )
    [metadata] = data_of(parts, "messages/metadata")
    [(message_id, meta)] = metadata.items()
    assert meta["metadata"]["langgraph_node"] == "action"
    partial = data_of(parts, "messages/partial")
    assert all(m["id"] == message_id for [m] in partial)
    assert partial[-1][0]["content"] == ANSWER  # the whole message so far, not a delta


async def test_interrupt_then_resume(
    client: LangGraphClient, llm: ScriptedLLM, existing: Path
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply(tool_calls=[OVERWRITE]))
    first = await collect(
        client.runs.stream(
            thread_id,
            "ducklm",
            input=prompt("overwrite a.txt"),
            stream_mode=["values", "updates", "custom"],
            context=QUIET,
        )
    )
    assert not data_of(first, "error")
    [update] = [u for u in data_of(first, "updates") if "__interrupt__" in u]
    [interrupt] = update["__interrupt__"]
    request = interrupt["value"]
    (action,) = request["action_requests"]
    assert (action["name"], action["args"]) == ("file_write", OVERWRITE.args)
    # The reason, then the change as a diff.
    assert action["description"].startswith("overwrite existing file a.txt:\n--- a/a.txt\n")
    assert "\n-old\n" in action["description"] and "\n+new\n" in action["description"]
    # Byte for byte what the LangGraph server would send for this interrupt.
    expected = Interrupt(value=request, id=interrupt["id"])
    assert update == json.loads(json_dumpb({"__interrupt__": (expected,)}))
    # values also carries it, beside the state, as LangGraph's values mode does.
    [paused_values] = [v for v in data_of(first, "values") if "__interrupt__" in v]
    assert paused_values["__interrupt__"] == [interrupt]
    assert paused_values["messages"][-1]["tool_calls"][0]["name"] == "file_write"
    assert await asyncio.to_thread(existing.read_text) == "old"

    # The thread shows the question: per task, for the whole thread, and as its status.
    state = await client.threads.get_state(thread_id)
    assert state["next"] == ["tool"]
    [task] = state["tasks"]
    assert task["interrupts"] == [{"id": interrupt["id"], "value": request}]
    assert state["interrupts"] == [{"id": interrupt["id"], "value": request}]
    thread = await client.threads.get(thread_id)
    assert thread["status"] == "interrupted"
    assert thread["interrupts"] == {task["id"]: [{"id": interrupt["id"], "value": request}]}
    assert [t["thread_id"] for t in await client.threads.search(status="interrupted")] == [
        thread_id
    ]

    # Approve with a plain resume value: it answers the one open interrupt.
    llm.script(reply("Done: a.txt overwritten."))
    second = await collect(
        client.runs.stream(
            thread_id,
            "ducklm",
            command={"resume": {"decisions": [{"type": "approve"}]}},
            stream_mode=["updates", "custom"],
        )
    )
    assert not any("__interrupt__" in u for u in data_of(second, "updates"))
    finished = [e for e in data_of(second, "custom") if e["type"] == "tool_call_finished"]
    assert [(e["tool"], e["status"], e["decision"]) for e in finished] == [
        ("file_write", "success", "approve")
    ]
    assert await asyncio.to_thread(existing.read_text) == "new"
    state = await client.threads.get_state(thread_id)
    assert state["next"] == []
    assert state["interrupts"] == []
    assert state["values"]["final"] == "Done: a.txt overwritten."
    assert (await client.threads.get(thread_id))["status"] == "idle"


async def test_interrupt_before_a_node_then_go_on(
    client: LangGraphClient, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "notes.md").write_text, "quack")
    thread_id = await new_thread(client)
    llm.script(reply(tool_calls=[call("file_read", path="notes.md")]))
    await client.runs.wait(
        thread_id, "ducklm", input=prompt("read notes.md"), context=QUIET, interrupt_before=["tool"]
    )
    state = await client.threads.get_state(thread_id)
    assert state["next"] == ["tool"]
    assert state["interrupts"] == []
    assert (await client.threads.get(thread_id))["status"] == "interrupted"

    llm.script(reply("It says quack."))
    done = await client.runs.wait(thread_id, "ducklm", context=QUIET)  # no input: go on
    assert isinstance(done, dict)
    assert done["final"] == "It says quack."
    assert done["messages"][-2]["type"] == "tool"


async def test_wait_returns_the_values_or_the_interrupt(
    client: LangGraphClient, llm: ScriptedLLM, existing: Path
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply(ANSWER))
    done = await client.runs.wait(thread_id, "ducklm", input=prompt(), context=QUIET)
    assert isinstance(done, dict)
    assert done["final"] == ANSWER
    assert "__interrupt__" not in done

    llm.script(reply(tool_calls=[OVERWRITE]))
    paused = await client.runs.wait(
        thread_id, "ducklm", input=prompt("overwrite a.txt"), context=QUIET
    )
    assert isinstance(paused, dict)
    [interrupt] = paused["__interrupt__"]
    assert interrupt["value"]["action_requests"][0]["name"] == "file_write"

    llm.script(reply("Left as it was."))
    rejected = await client.runs.wait(
        thread_id, "ducklm", command={"resume": {"decisions": [{"type": "reject"}]}}
    )
    assert isinstance(rejected, dict)
    assert rejected["final"] == "Left as it was."
    assert await asyncio.to_thread(existing.read_text) == "old"


async def test_thread_less_runs(client: LangGraphClient, llm: ScriptedLLM) -> None:
    llm.script(reply(ANSWER))
    done = await client.runs.wait(None, "ducklm", input=prompt(), context=QUIET)
    assert isinstance(done, dict)
    assert done["final"] == ANSWER
    llm.script(reply(ANSWER))
    parts = await collect(client.runs.stream(None, "ducklm", input=prompt(), context=QUIET))
    assert data_of(parts, "values")[-1]["final"] == ANSWER
    assert await client.threads.search() == []  # temporary threads leave nothing


async def test_state_and_history(client: LangGraphClient, llm: ScriptedLLM) -> None:
    thread_id = await new_thread(client)
    empty = await client.threads.get_state(thread_id)
    assert empty["values"] == {}
    assert empty["checkpoint"] is None
    assert await client.threads.get_history(thread_id) == []

    llm.script(reply(ANSWER))
    await client.runs.wait(thread_id, "ducklm", input=prompt(), context=QUIET)
    latest = await client.threads.get_state(thread_id)
    assert latest["values"]["final"] == ANSWER
    assert latest["checkpoint"]["thread_id"] == thread_id
    assert latest["metadata"]["graph_id"] == "ducklm"

    history = await client.threads.get_history(thread_id, limit=100)
    assert history[0]["checkpoint"] == latest["checkpoint"]
    assert history[-1]["parent_checkpoint"] is None
    for newer, older in itertools.pairwise(history):
        assert newer["parent_checkpoint"]["checkpoint_id"] == older["checkpoint"]["checkpoint_id"]
    assert len(await client.threads.get_history(thread_id, limit=2)) == 2
    before = await client.threads.get_history(thread_id, before=history[0]["checkpoint"])
    assert before[0]["checkpoint"] == history[1]["checkpoint"]
    first_id = history[-1]["checkpoint"]["checkpoint_id"]
    at_start = await client.threads.get_state(thread_id, checkpoint_id=first_id)
    assert at_start["checkpoint"]["checkpoint_id"] == first_id

    updated = await client.threads.update_state(thread_id, {"summary": "ducks"})
    assert updated["checkpoint"]["thread_id"] == thread_id
    assert (await client.threads.get_state(thread_id))["values"]["summary"] == "ducks"


async def test_a_run_goes_on_when_its_client_leaves(
    client: LangGraphClient, llm: ScriptedLLM
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply(ANSWER, chunk_delay_s=0.05))
    parts = client.runs.stream(
        thread_id, "ducklm", input=prompt(), stream_mode="custom", context=QUIET
    )
    async for part in parts:
        if isinstance(part, StreamPart) and part.event == "custom":
            break  # the client leaves mid-answer
    await parts.aclose()  # type: ignore[attr-defined]
    thread = await status_leaves(client, thread_id, "busy")
    assert thread["status"] == "idle"
    assert thread["values"]["final"] == ANSWER


async def test_on_disconnect_cancel_stops_the_run(
    client: LangGraphClient, llm: ScriptedLLM
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply(ANSWER, chunk_delay_s=0.2))
    parts = client.runs.stream(
        thread_id,
        "ducklm",
        input=prompt(),
        stream_mode="custom",
        context=QUIET,
        on_disconnect="cancel",
    )
    async for part in parts:  # leave at the answer's first token, inside the action step
        if isinstance(part, StreamPart) and part.event == "custom" and part.data["type"] == "token":
            break
    await parts.aclose()  # type: ignore[attr-defined]
    thread = await status_leaves(client, thread_id, "busy")
    assert thread["values"].get("final", "") == ""
    state = await client.threads.get_state(thread_id)
    assert state["next"] == ["action"]  # stopped inside the action step


async def test_one_run_at_a_time_per_thread(
    client: LangGraphClient, served: Served, llm: ScriptedLLM
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply(ANSWER, delay_s=0.5))
    first = asyncio.create_task(
        client.runs.wait(thread_id, "ducklm", input=prompt(), context=QUIET)
    )
    await status_leaves(client, thread_id, "idle")
    # runs.wait raises httpx's own error (ConflictError is one of its kind).
    with pytest.raises(httpx.HTTPStatusError) as refused:
        await client.runs.wait(thread_id, "ducklm", input=prompt(), context=QUIET)
    assert refused.value.response.status_code == 409
    assert "already running" in refused.value.response.json()["detail"]
    with pytest.raises(ConflictError):
        await collect(client.runs.stream(thread_id, "ducklm", input=prompt(), context=QUIET))
    with pytest.raises(ConflictError):
        await client.threads.delete(thread_id)
    assert [t["thread_id"] for t in await client.threads.search(status="busy")] == [thread_id]
    done = await first
    assert isinstance(done, dict)
    assert done["final"] == ANSWER

    # The same holds across doors: a `/v1` task on the thread makes it busy here too.
    llm.script(reply("From the other door.", delay_s=0.5))
    chat = asyncio.create_task(
        served.client.post(
            "/v1/chat", json={"message": "hi", "conversation_id": thread_id, **QUIET}
        )
    )
    await status_leaves(client, thread_id, "idle")
    with pytest.raises(ConflictError):
        await collect(client.runs.stream(thread_id, "ducklm", input=prompt(), context=QUIET))
    assert (await chat).json()["answer"] == "From the other door."
    assert (await client.threads.get(thread_id))["status"] == "idle"


async def test_a_failed_run_is_an_error_event_without_exception_text(
    client: LangGraphClient, llm: ScriptedLLM
) -> None:
    thread_id = await new_thread(client)
    llm.set_default(None)  # the model server answers 500 to everything
    parts = await collect(client.runs.stream(thread_id, "ducklm", input=prompt(), context=QUIET))
    [error] = data_of(parts, "error")
    assert error["message"] == (
        "The model server failed while answering (server error). Check its log."
    )
    assert set(error) == {"error", "message"}
    assert parts[-1].event == "error"
    thread = await client.threads.get(thread_id)
    assert thread["status"] == "error"
    waited = await client.runs.wait(
        thread_id, "ducklm", input=prompt(), context=QUIET, raise_error=False
    )
    assert isinstance(waited, dict)
    assert waited["__error__"]["message"] == error["message"]


async def test_a_sudo_question_takes_the_password(
    client: LangGraphClient, llm: ScriptedLLM, fake_sudo: Path, settings: Settings
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply(tool_calls=[call("shell_exec", command="sudo ls /root")]))
    await client.runs.wait(thread_id, "ducklm", input=prompt("list /root"), context=QUIET)
    asked = await client.runs.wait(
        thread_id, "ducklm", command={"resume": {"decisions": [{"type": "approve"}]}}
    )
    assert isinstance(asked, dict)
    assert asked["__interrupt__"][0]["value"]["type"] == "password"

    llm.script(reply("Listed."))
    done = await client.runs.wait(thread_id, "ducklm", command={"resume": {"password": PASSWORD}})
    assert isinstance(done, dict)
    assert done["final"] == "Listed."
    assert await asyncio.to_thread(fake_sudo.read_text) == "match\n"
    history = await client.threads.get_history(thread_id, limit=100)
    assert PASSWORD not in json.dumps(history)


async def test_bad_inputs_get_clear_4xx(
    client: LangGraphClient, served: Served, llm: ScriptedLLM
) -> None:
    unknown = "00000000-0000-4000-8000-000000000000"
    with pytest.raises(NotFoundError, match="not found"):
        await client.threads.get(unknown)
    with pytest.raises(NotFoundError):
        await client.threads.get_state(unknown)
    with pytest.raises(NotFoundError):
        await collect(client.runs.stream(unknown, "ducklm", input=prompt()))
    with pytest.raises(httpx.HTTPStatusError) as no_assistant:
        await client.runs.wait(None, "not-an-assistant", input=prompt())
    assert no_assistant.value.response.status_code == 404

    thread_id = await new_thread(client)
    with pytest.raises(httpx.HTTPStatusError) as not_waiting:
        await client.runs.wait(thread_id, "ducklm", command={"resume": {"decisions": []}})
    assert not_waiting.value.response.status_code == 409
    response = await served.client.post(
        f"/threads/{thread_id}/runs/wait",
        json={"assistant_id": "ducklm", "command": {"resume": "yes"}},
    )
    assert response.status_code == 409
    assert response.json() == {
        "detail": f"thread {thread_id} is not waiting for an answer: there is nothing to resume"
    }
    # With input and command, the command wins (as in LangGraph's server): a resume here.
    both = {"assistant_id": "ducklm", "input": prompt(), "command": {"resume": 1}}
    assert (
        await served.client.post(f"/threads/{thread_id}/runs/wait", json=both)
    ).status_code == 409
    resume_without_thread = await served.client.post(
        "/runs/wait", json={"assistant_id": "ducklm", "command": {"resume": "yes"}}
    )
    assert resume_without_thread.status_code == 400

    bodies: list[dict[str, Any]] = [
        {"assistant_id": "ducklm", "input": prompt(), "stream_mode": "no-such-mode"},
        {"assistant_id": "ducklm", "input": "hi"},
        {"input": prompt()},
        {"assistant_id": "ducklm", "input": {"messages": [{"role": "bogus", "content": "x"}]}},
    ]
    for body in bodies:
        response = await served.client.post(f"/threads/{thread_id}/runs/stream", json=body)
        assert response.status_code == 422, body
        assert isinstance(response.json()["detail"], str)
    with pytest.raises(UnprocessableEntityError):
        await client.threads.create(thread_id="not-a-uuid")
    malformed = await served.client.post(
        "/threads/search", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    bogus = {"assistant_id": "ducklm", "input": {"messages": [{"role": "bogus", "content": "x"}]}}
    waited = await served.client.post("/runs/wait", json=bogus)
    assert waited.status_code == 422
    assert "role 'bogus' is not one of" in waited.json()["detail"]
    assert 400 <= malformed.status_code < 500
    assert "Traceback" not in malformed.text
    assert not llm.requests, "no bad request reached the model"
