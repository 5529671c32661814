"""Double-texting: a second run on a busy thread, under each `multitask_strategy`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError
from langgraph_sdk.schema import StreamPart

from .server_under_test import Target
from .streams import RUN_TIMEOUT_S, hello, new_thread, prompt, run_options, slowly

SECOND = "hello second"


class Busy:
    """A thread running a slow first run, streamed by a task of the test."""

    def __init__(self, thread_id: str, run_id: str, stream: asyncio.Task[Any]) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.stream = stream


@asynccontextmanager
async def busy_thread(client: LangGraphClient, target: Target) -> AsyncIterator[Busy]:
    """A thread busy with a slow run until the block ends (the stream is then dropped).

    The run is under way once its input is in the state (its first `values` event): a
    run still queued has nothing to keep, interrupt or roll back.
    """
    thread_id = await new_thread(client)
    started: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    stream = asyncio.create_task(_follow(client, target, thread_id, started))
    try:
        run_id = await asyncio.wait_for(started, RUN_TIMEOUT_S)
        yield Busy(thread_id, run_id, stream)
    finally:
        stream.cancel()
        with suppress(asyncio.CancelledError, httpx.HTTPError):
            await stream


async def _follow(
    client: LangGraphClient, target: Target, thread_id: str, started: asyncio.Future[str]
) -> None:
    """Stream the slow run; `started` gets its id at its first `values` event."""
    parts = client.runs.stream(
        thread_id, target.assistant, input=slowly(), stream_mode="values", **run_options(target)
    )
    run_id = ""
    async for part in parts:
        if isinstance(part, StreamPart) and part.event == "metadata":
            run_id = part.data["run_id"]
        elif isinstance(part, StreamPart) and part.event == "values" and not started.done():
            started.set_result(run_id)


def _human_texts(values: dict[str, Any]) -> list[str]:
    return [m["content"] for m in values.get("messages", []) if m["type"] == "human"]


async def test_reject_refuses_the_second_run(client: LangGraphClient, target: Target) -> None:
    async with busy_thread(client, target) as busy:
        with pytest.raises(httpx.HTTPStatusError) as refused:
            await client.runs.wait(
                busy.thread_id,
                target.assistant,
                input=hello(),
                multitask_strategy="reject",
                **run_options(target),
            )
        assert refused.value.response.status_code == 409
        assert isinstance(refused.value.response.json()["detail"], str)
        await busy.stream
    assert (await client.threads.get(busy.thread_id))["status"] == "idle"


async def test_enqueue_runs_the_second_after_the_first(
    client: LangGraphClient, target: Target
) -> None:
    async with busy_thread(client, target) as busy:
        second = await client.runs.create(
            busy.thread_id,
            target.assistant,
            input=prompt(SECOND),
            multitask_strategy="enqueue",
            **run_options(target),
        )
        assert second["status"] == "pending"
        done = await client.runs.join(busy.thread_id, second["run_id"])
        first = await client.runs.get(busy.thread_id, busy.run_id)
    assert first["status"] == "success"
    texts = _human_texts(done)
    assert len(texts) == 2
    assert texts[1] == SECOND


async def test_interrupt_stops_the_first_and_keeps_its_progress(
    client: LangGraphClient, target: Target
) -> None:
    async with busy_thread(client, target) as busy:
        second = await client.runs.create(
            busy.thread_id,
            target.assistant,
            input=prompt(SECOND),
            multitask_strategy="interrupt",
            **run_options(target),
        )
        done = await client.runs.join(busy.thread_id, second["run_id"])
        first = await client.runs.get(busy.thread_id, busy.run_id)
    assert first["status"] == "interrupted"
    texts = _human_texts(done)
    assert texts[-1] == SECOND
    assert len(texts) == 2, "the first run's input stays"


async def test_rollback_removes_the_first_run(client: LangGraphClient, target: Target) -> None:
    async with busy_thread(client, target) as busy:
        second = await client.runs.create(
            busy.thread_id,
            target.assistant,
            input=prompt(SECOND),
            multitask_strategy="rollback",
            **run_options(target),
        )
        done = await client.runs.join(busy.thread_id, second["run_id"])
        with pytest.raises(NotFoundError):
            await client.runs.get(busy.thread_id, busy.run_id)
    assert _human_texts(done) == [SECOND], "the first run left nothing behind"
