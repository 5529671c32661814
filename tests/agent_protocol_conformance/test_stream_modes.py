"""`runs/stream` on a thread and without one, in each stream mode, and `runs/wait`.

One run streams `values`, `updates`, `messages-tuple` and `custom` at once; `messages`
gets a run of its own. `events`, `debug` and subgraphs: `test_stream_internals.py`.
"""

from __future__ import annotations

import uuid
from typing import Any

from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.schema import StreamPart

from .server_under_test import Target
from .streams import (
    collect,
    data_of,
    hello,
    last_ai_text,
    new_thread,
    run_options,
)

SHARED_MODES = ["values", "updates", "messages-tuple", "custom"]
MESSAGE_EVENTS = {"messages/metadata", "messages/partial", "messages/complete"}


def _check_values(parts: list[StreamPart]) -> None:
    final = data_of(parts, "values")[-1]
    assert [m["type"] for m in final["messages"]][-2:] == ["human", "ai"]
    assert last_ai_text(final).startswith("Hello back")


def _check_updates(parts: list[StreamPart]) -> None:
    updates = data_of(parts, "updates")
    assert updates
    assert all(isinstance(u, dict) and len(u) >= 1 for u in updates)


def _check_messages_tuple(parts: list[StreamPart]) -> None:
    tuples = data_of(parts, "messages")
    assert tuples
    for chunk, metadata in tuples:
        assert {"type", "content"} <= set(chunk)
        assert "langgraph_node" in metadata
    text = "".join(c["content"] for c, _ in tuples if c["type"] == "AIMessageChunk")
    assert "Hello back" in text


def _check_messages(parts: list[StreamPart]) -> None:
    assert data_of(parts, "messages/metadata")
    partial = data_of(parts, "messages/partial") + data_of(parts, "messages/complete")
    assert any("Hello back" in str(m[0].get("content")) for m in partial)


def _check_custom(parts: list[StreamPart]) -> None:
    assert data_of(parts, "custom"), "the graph writes custom events"


async def _stream(client: LangGraphClient, target: Target, modes: list[str]) -> list[StreamPart]:
    thread_id = await new_thread(client)
    created: list[dict[str, Any]] = []
    parts = await collect(
        client.runs.stream(
            thread_id,
            target.assistant,
            input=hello(),
            stream_mode=modes,  # type: ignore[arg-type]
            on_run_created=created.append,
            **run_options(target),
        )
    )
    assert parts[0].event == "metadata"
    assert created == [{"run_id": parts[0].data["run_id"], "thread_id": thread_id}]
    thread = await client.threads.get(thread_id)
    assert thread["status"] == "idle"
    assert last_ai_text(thread["values"]).startswith("Hello back")
    return parts


async def test_the_shared_modes_in_one_run(client: LangGraphClient, target: Target) -> None:
    parts = await _stream(client, target, SHARED_MODES)
    events = {p.event for p in parts}
    assert events == {"metadata", "values", "updates", "messages", "custom"}
    _check_values(parts)
    _check_updates(parts)
    _check_messages_tuple(parts)
    _check_custom(parts)


async def test_messages_mode(client: LangGraphClient, target: Target) -> None:
    parts = await _stream(client, target, ["messages"])
    assert {p.event for p in parts} - {"metadata"} <= MESSAGE_EVENTS
    _check_messages(parts)


async def test_stateless_stream_with_subgraphs_leaves_no_thread(
    client: LangGraphClient, target: Target
) -> None:
    tag = {"suite": uuid.uuid4().hex}
    parts = await collect(
        client.runs.stream(
            None,
            target.assistant,
            input=hello(),
            metadata=tag,
            stream_mode=["values", "updates"],
            stream_subgraphs=True,
            **run_options(target),
        )
    )
    assert parts[0].event == "metadata"
    # The root graph's events keep their mode's name; a subgraph's are `mode|ns`.
    for part in parts[1:]:
        mode, _, namespace = part.event.partition("|")
        assert mode in {"values", "updates"}, part.event
        assert namespace == "" or ":" in namespace, part.event
    _check_values([p for p in parts if p.event == "values"])
    assert await client.threads.search(metadata=tag) == [], "on_completion defaults to delete"


async def test_stateless_wait_kept_with_on_completion_keep(
    client: LangGraphClient, target: Target
) -> None:
    tag = {"suite": uuid.uuid4().hex}
    done = await client.runs.wait(
        None,
        target.assistant,
        input=hello(),
        metadata=tag,
        on_completion="keep",
        **run_options(target),
    )
    assert isinstance(done, dict)
    assert last_ai_text(done).startswith("Hello back")
    [kept] = await client.threads.search(metadata=tag)
    assert last_ai_text(kept["values"]) == last_ai_text(done)


async def test_wait_on_a_thread_created_by_the_run(client: LangGraphClient, target: Target) -> None:
    thread_id = str(uuid.uuid4())
    done = await client.runs.wait(
        thread_id, target.assistant, input=hello(), if_not_exists="create", **run_options(target)
    )
    assert isinstance(done, dict)
    assert last_ai_text(done).startswith("Hello back")
    state = await client.threads.get_state(thread_id)
    assert _said(state["values"]) == _said(done)


def _said(values: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(m["type"], m["content"], m["id"]) for m in values["messages"]]
