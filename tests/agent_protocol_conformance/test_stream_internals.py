"""The graph's run in detail: stream modes `events` and `debug`, and `stream_subgraphs`.

`events` is LangChain's `astream_events` (v2) of the run, less the root graph's own
`on_chain_stream` (its chunks are the other modes); `debug` is the graph's `checkpoint`,
`task` and `task_result` chunks, each checkpoint with its `checkpoint` and
`parent_checkpoint`. Both hold on a thread run, beside other modes, at an interrupt,
and on a background run joined after a disconnect with `Last-Event-ID`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.schema import StreamPart

from .server_under_test import Target
from .streams import (
    RUN_TIMEOUT_S,
    collect,
    data_of,
    hello,
    last_ai_text,
    new_thread,
    overwrite,
    run_options,
    slowly,
)

EVENT_KEYS = {"event", "name", "run_id", "tags", "metadata", "data", "parent_ids"}
DEBUG_KINDS = {"checkpoint", "task", "task_result"}


async def _stream(
    client: LangGraphClient, target: Target, modes: list[str], **options: Any
) -> tuple[str, list[StreamPart]]:
    """A thread and every part of one run on it (`hello()` unless `input` is given)."""
    thread_id = await new_thread(client)
    options.setdefault("input", hello())
    parts = await collect(
        client.runs.stream(
            thread_id,
            target.assistant,
            stream_mode=modes,  # type: ignore[arg-type]
            **options,
            **run_options(target),
        )
    )
    assert parts[0].event == "metadata"
    return thread_id, parts


def _check_events(events: list[dict[str, Any]], run_id: str) -> None:
    """The run's events: its root first and last, every other one under it."""
    assert all(set(e) >= EVENT_KEYS for e in events), events[0]
    first, last = events[0], events[-1]
    assert (first["event"], first["run_id"], first["parent_ids"]) == ("on_chain_start", run_id, [])
    assert (last["event"], last["run_id"]) == ("on_chain_end", run_id)
    inner = [e for e in events if e["run_id"] != run_id]
    assert inner and all(e["parent_ids"][0] == run_id for e in inner)
    roots_stream = [e for e in events if e["run_id"] == run_id and e["event"] == "on_chain_stream"]
    assert roots_stream == [], "the root graph's chunks are the other modes, not events"


def _check_debug(chunks: list[dict[str, Any]], thread_id: str) -> None:
    """Checkpoints name their thread; every task's result follows the task."""
    assert {c["type"] for c in chunks} == DEBUG_KINDS
    assert all({"step", "timestamp", "type", "payload"} <= set(c) for c in chunks)
    checkpoints = [c["payload"] for c in chunks if c["type"] == "checkpoint"]
    for payload in checkpoints:
        assert {"config", "values", "metadata", "next", "tasks"} <= set(payload)
        assert payload["checkpoint"]["thread_id"] == thread_id
        assert payload["checkpoint"]["checkpoint_id"]
    assert checkpoints[0]["parent_checkpoint"] is None
    assert [p["parent_checkpoint"] for p in checkpoints[1:]] == [
        p["checkpoint"] for p in checkpoints[:-1]
    ]
    tasks = {c["payload"]["id"]: c["payload"] for c in chunks if c["type"] == "task"}
    assert all({"id", "name", "input", "triggers"} <= set(t) for t in tasks.values())
    for result in (c["payload"] for c in chunks if c["type"] == "task_result"):
        assert {"id", "name", "error", "result", "interrupts"} <= set(result)
        assert tasks[result["id"]]["name"] == result["name"]


async def test_events_mode(client: LangGraphClient, target: Target) -> None:
    thread_id, parts = await _stream(client, target, ["events"])
    assert {p.event for p in parts} == {"metadata", "events"}
    events = data_of(parts, "events")
    _check_events(events, parts[0].data["run_id"])
    kinds = {e["event"] for e in events}
    assert {"on_chain_start", "on_chain_end", "on_chat_model_start", "on_chat_model_end"} <= kinds
    streamed = [e["data"]["chunk"] for e in events if e["event"] == "on_chat_model_stream"]
    assert "Hello back" in "".join(chunk["content"] for chunk in streamed)
    assert last_ai_text(events[-1]["data"]["output"]).startswith("Hello back")
    state = await client.threads.get_state(thread_id)
    assert _said(events[-1]["data"]["output"]) == _said(state["values"])


async def test_events_beside_other_modes(client: LangGraphClient, target: Target) -> None:
    _, parts = await _stream(client, target, ["events", "values", "updates"])
    assert {p.event for p in parts} == {"metadata", "events", "values", "updates"}
    events = data_of(parts, "events")
    _check_events(events, parts[0].data["run_id"])
    assert events[-1]["data"]["output"] == data_of(parts, "values")[-1]


async def test_debug_mode(client: LangGraphClient, target: Target) -> None:
    thread_id, parts = await _stream(client, target, ["debug"])
    assert {p.event for p in parts} == {"metadata", "debug"}
    chunks = data_of(parts, "debug")
    _check_debug(chunks, thread_id)
    last = [c["payload"] for c in chunks if c["type"] == "checkpoint"][-1]
    assert last_ai_text(last["values"]).startswith("Hello back")
    assert last["next"] == []
    state = await client.threads.get_state(thread_id)
    assert last["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]


async def test_events_and_debug_at_an_interrupt(client: LangGraphClient, target: Target) -> None:
    thread_id, parts = await _stream(client, target, ["events", "debug"], input=overwrite())
    _check_events(data_of(parts, "events"), parts[0].data["run_id"])
    chunks = data_of(parts, "debug")
    _check_debug(chunks, thread_id)
    results = [c["payload"] for c in chunks if c["type"] == "task_result"]
    [asked] = [i for r in results for i in r["interrupts"]]
    assert {"value", "id"} <= set(asked)
    thread = await client.threads.get(thread_id)
    assert thread["status"] == "interrupted"
    pending = [i["id"] for items in thread["interrupts"].values() for i in items]
    assert pending == [asked["id"]]
    # The run that stopped there is resumed as any other.
    done = await client.runs.wait(
        thread_id, target.assistant, command={"resume": target.approve}, **run_options(target)
    )
    assert isinstance(done, dict)
    assert last_ai_text(done)


async def test_subgraphs_on_a_graph_without_them(client: LangGraphClient, target: Target) -> None:
    """`stream_subgraphs` adds `mode|namespace` events for subgraphs only: a run whose graph
    has none streams the same events as without it."""
    modes = ["values", "updates", "debug", "messages-tuple"]
    _, plain = await _stream(client, target, modes)
    thread_id, nested = await _stream(client, target, modes, stream_subgraphs=True)
    assert sorted(p.event for p in nested) == sorted(p.event for p in plain)
    for part in nested:
        mode, _, namespace = part.event.partition("|")
        assert mode in {"metadata", "values", "updates", "debug", "messages"}, part.event
        assert namespace == "" or ":" in namespace, part.event
    _check_debug(data_of(nested, "debug"), thread_id)


async def test_join_events_and_debug_after_a_disconnect(
    client: LangGraphClient, target: Target
) -> None:
    """A background run in `events` and `debug`, joined, left and joined again with
    Last-Event-ID: nothing missed, nothing twice."""
    thread_id = await new_thread(client)
    run = await client.runs.create(
        thread_id,
        target.assistant,
        input=slowly(),
        stream_mode=["events", "debug"],
        stream_resumable=True,
        **run_options(target),
    )
    seen = await _first_parts(client.runs.join_stream(thread_id, run["run_id"], last_event_id="-1"))
    assert seen and all(p.id for p in seen), "a resumable stream names each event"
    rest = await collect(
        client.runs.join_stream(thread_id, run["run_id"], last_event_id=seen[-1].id)
    )
    whole = await collect(client.runs.join_stream(thread_id, run["run_id"], last_event_id="-1"))
    ids = [p.id for p in whole]
    if target.name == "reference" and ids.count(seen[-1].id) > 1:
        # langgraph_runtime_inmem names every event of one millisecond `{ms}-0`, so a
        # resume after such an id loses the rest of that millisecond: its bug, seen
        # here only when the disconnect falls inside a shared millisecond.
        pytest.xfail("reference: events of one millisecond share one id, so a resume loses some")
    if target.name != "reference":
        assert len(set(ids)) == len(ids), "each event has its own id"
    joined = [(p.id, p.event, p.data) for p in [*seen, *rest]]
    assert joined == [(p.id, p.event, p.data) for p in whole]
    assert {p.event for p in whole} == {"metadata", "events", "debug"}
    _check_events(data_of(whole, "events"), run["run_id"])
    _check_debug(data_of(whole, "debug"), thread_id)


async def _first_parts(parts: Any, count: int = 5) -> list[StreamPart]:
    """The first `count` parts of a stream, then leave it (a disconnect)."""
    seen: list[StreamPart] = []
    async with asyncio.timeout(RUN_TIMEOUT_S):
        async for part in parts:
            if isinstance(part, StreamPart):
                seen.append(part)
                if len(seen) == count:
                    break
    await parts.aclose()
    return seen


def _said(values: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(m["type"], m["content"], m["id"]) for m in values["messages"]]


ALL_MODES = [
    "values",
    "updates",
    "messages",
    "messages-tuple",
    "custom",
    "events",
    "debug",
    "tasks",
    "checkpoints",
]


def _check_tasks(tasks: list[dict[str, Any]]) -> None:
    """Each task's start (`input`, `triggers`), then its result (`result`, `error`)."""
    started = [t for t in tasks if "triggers" in t]
    ended = [t for t in tasks if "result" in t]
    assert started and len(started) == len(ended), tasks
    assert all({"id", "name", "input"} <= set(t) for t in started)
    assert all({"id", "name", "error", "interrupts"} <= set(t) for t in ended)
    assert [t["id"] for t in started] == [t["id"] for t in ended]


def _check_checkpoints(checkpoints: list[dict[str, Any]], thread_id: str) -> None:
    """Each checkpoint's config, parent, values, metadata, next nodes and tasks."""
    assert checkpoints
    keys = {"config", "parent_config", "values", "metadata", "next", "tasks"}
    assert all(keys <= set(c) for c in checkpoints), checkpoints[0]
    assert {c["config"]["configurable"]["thread_id"] for c in checkpoints} == {thread_id}
    last = checkpoints[-1]
    assert last["next"] == [] and last_ai_text(last["values"]).startswith("Hello back")


async def test_tasks_and_checkpoints_modes(client: LangGraphClient, target: Target) -> None:
    thread_id, parts = await _stream(client, target, ["tasks", "checkpoints"])
    assert {p.event for p in parts} == {"metadata", "tasks", "checkpoints"}
    _check_tasks(data_of(parts, "tasks"))
    _check_checkpoints(data_of(parts, "checkpoints"), thread_id)


async def test_every_mode_at_once(client: LangGraphClient, target: Target) -> None:
    thread_id, parts = await _stream(client, target, ALL_MODES)
    seen = {p.event for p in parts}
    # `messages` beside `messages-tuple`: LangGraph's server sends the tuples alone.
    assert seen >= {"values", "updates", "messages", "custom", "events", "debug"}
    assert seen >= {"tasks", "checkpoints"}
    _check_tasks(data_of(parts, "tasks"))
    _check_checkpoints(data_of(parts, "checkpoints"), thread_id)
