"""Background runs: create, get, list, join, join a live stream (resumably), cancel, delete."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError
from langgraph_sdk.schema import StreamPart

from .server_under_test import Target
from .streams import (
    RUN_TIMEOUT_S,
    collect,
    hello,
    last_ai_text,
    new_thread,
    overwrite,
    run_options,
    run_status_becomes,
    slowly,
    thread_status_leaves,
)

LIVE = {"pending", "running"}


async def test_create_get_list_join_delete(client: LangGraphClient, target: Target) -> None:
    thread_id = await new_thread(client)
    run = await client.runs.create(
        thread_id, target.assistant, input=hello(), metadata={"kind": "bg"}, **run_options(target)
    )
    run_id = run["run_id"]
    assert run["thread_id"] == thread_id
    assert run["status"] in LIVE | {"success"}
    assert run["metadata"]["kind"] == "bg"

    result = await client.runs.join(thread_id, run_id)
    assert last_ai_text(result).startswith("Hello back")
    got = await client.runs.get(thread_id, run_id)
    assert got["status"] == "success"
    listed = await client.runs.list(thread_id)
    assert run_id in [r["run_id"] for r in listed]
    assert [r["run_id"] for r in await client.runs.list(thread_id, status="success")] == [run_id]

    await client.runs.delete(thread_id, run_id)
    with pytest.raises(NotFoundError):
        await client.runs.get(thread_id, run_id)


async def test_a_stateless_background_run(client: LangGraphClient, target: Target) -> None:
    run = await client.runs.create(None, target.assistant, input=hello(), **run_options(target))
    assert run["status"] in LIVE | {"success"}
    assert run["run_id"]


async def test_cancel_stops_a_background_run(client: LangGraphClient, target: Target) -> None:
    thread_id = await new_thread(client)
    run = await client.runs.create(
        thread_id, target.assistant, input=slowly(), **run_options(target)
    )
    await run_status_becomes(client, thread_id, run["run_id"], {"running"})
    await client.runs.cancel(thread_id, run["run_id"], wait=True)
    cancelled = await client.runs.get(thread_id, run["run_id"])
    assert cancelled["status"] == "interrupted"
    thread = await thread_status_leaves(client, thread_id, "busy")
    assert thread["status"] in {"idle", "interrupted"}


async def test_join_stream_resumes_after_a_disconnect(
    client: LangGraphClient, target: Target
) -> None:
    """A client that joins, leaves and comes back with Last-Event-ID misses nothing and
    sees nothing twice: what it saw is the end of what the run's own stream sent."""
    thread_id = await new_thread(client)
    started: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
    modes = ["values", "messages-tuple"]
    whole = asyncio.create_task(
        collect(
            client.runs.stream(
                thread_id,
                target.assistant,
                input=slowly(),
                stream_mode=modes,  # type: ignore[arg-type]
                stream_resumable=True,
                on_run_created=started.set_result,
                **run_options(target),
            )
        )
    )
    try:
        run_id = (await asyncio.wait_for(started, RUN_TIMEOUT_S))["run_id"]
        seen = await _first_parts(client.runs.join_stream(thread_id, run_id), 3)
        assert all(p.id for p in seen), "a resumable stream names each event"
        rest = await collect(client.runs.join_stream(thread_id, run_id, last_event_id=seen[-1].id))
        sent = [(p.event, p.data) for p in await whole if p.event != "metadata"]
    finally:
        whole.cancel()
    joined = [(p.event, p.data) for p in [*seen, *rest] if p.event != "metadata"]
    assert len(joined) > len(seen)
    assert sent[-len(joined) :] == joined
    ids = [p.id for p in [*seen, *rest] if p.id]
    assert len(ids) == len(set(ids)), "an event came twice"


async def _first_parts(parts: Any, count: int) -> list[StreamPart]:
    """The first `count` non-metadata parts of a stream, then leave it (a disconnect)."""
    seen: list[StreamPart] = []
    async with asyncio.timeout(RUN_TIMEOUT_S):
        async for part in parts:
            if isinstance(part, StreamPart) and part.event != "metadata":
                seen.append(part)
                if len(seen) == count:
                    break
    await parts.aclose()
    return seen


async def test_runs_batch_creates_stateless_runs(client: LangGraphClient, target: Target) -> None:
    payload: dict[str, Any] = {
        "assistant_id": target.assistant,
        "input": hello(),
        **run_options(target),
    }
    runs = await client.runs.create_batch([payload, {**payload, "input": hello()}])  # type: ignore[list-item]
    assert len(runs) == 2
    assert len({r["run_id"] for r in runs}) == 2
    assert all(r["status"] in LIVE | {"success"} for r in runs)


async def test_cancel_many_by_ids_and_by_status(client: LangGraphClient, target: Target) -> None:
    """`POST /runs/cancel` (`runs.cancel_many`): the runs named on a thread, or every run
    of a status; a run enqueued behind a running one is `pending`."""
    thread_id = await new_thread(client)
    first = await client.runs.create(
        thread_id, target.assistant, input=slowly(), **run_options(target)
    )
    await run_status_becomes(client, thread_id, first["run_id"], {"running"})
    queued = await client.runs.create(
        thread_id,
        target.assistant,
        input=hello(),
        multitask_strategy="enqueue",
        **run_options(target),
    )
    await client.runs.cancel_many(status="pending")
    assert (await client.runs.get(thread_id, queued["run_id"]))["status"] == "interrupted"
    await client.runs.cancel_many(thread_id=thread_id, run_ids=[first["run_id"]])
    stopped = await run_status_becomes(client, thread_id, first["run_id"], {"interrupted"})
    assert stopped["status"] == "interrupted"
    await thread_status_leaves(client, thread_id, "busy")
    with pytest.raises(NotFoundError):  # nothing left to cancel
        await client.runs.cancel_many(thread_id=thread_id, run_ids=[first["run_id"]])


async def test_join_at_an_approval_gives_the_state_and_the_question(
    client: LangGraphClient, target: Target
) -> None:
    thread_id = await new_thread(client)
    run = await client.runs.create(
        thread_id, target.assistant, input=overwrite(), **run_options(target)
    )
    result = await client.runs.join(thread_id, run["run_id"])
    first = result["messages"][0]
    assert (first["type"], first["content"]) == ("human", "overwrite notes.txt")
    assert len(result["__interrupt__"]) == 1
    assert result["__interrupt__"][0]["value"]
