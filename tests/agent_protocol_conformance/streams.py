"""Reading runs: prompts in the suite's contract, streams collected, threads waited on."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.schema import StreamPart, StreamPartV2

from .server_under_test import Target

RUN_TIMEOUT_S = 60.0
"""Longest any one run (or wait for a thread) may take before the case fails."""
INTERRUPT = "__interrupt__"


def prompt(text: str) -> dict[str, Any]:
    """The input of one user message."""
    return {"messages": [{"role": "user", "content": text}]}


def hello() -> dict[str, Any]:
    """A message that gets a plain answer, different each time (so runs are told apart)."""
    return prompt(f"hello {uuid.uuid4().hex[:8]}")


def overwrite() -> dict[str, Any]:
    """A message whose turn stops at an interrupt (an action that needs approval)."""
    return prompt("overwrite notes.txt")


def slowly() -> dict[str, Any]:
    """A message whose answer streams over a few seconds."""
    return prompt(f"slowly {uuid.uuid4().hex[:8]}")


def run_options(target: Target) -> dict[str, Any]:
    """The options every run of the suite sends (the target's `context`)."""
    return {"context": target.context} if target.context is not None else {}


async def collect(
    parts: AsyncIterator[StreamPart | StreamPartV2], *, errors_ok: bool = False
) -> list[StreamPart]:
    """Every part of a (v1) stream; fails on an `error` event unless `errors_ok`."""
    async with asyncio.timeout(RUN_TIMEOUT_S):
        collected = [part async for part in parts if isinstance(part, StreamPart)]
    if not errors_ok:
        failed = [part.data for part in collected if part.event == "error"]
        assert not failed, f"the run failed: {failed}"
    return collected


def data_of(parts: list[StreamPart], event: str) -> list[Any]:
    """The payloads of the parts named `event`, in order."""
    return [part.data for part in parts if part.event == event]


def interrupts_of(parts: list[StreamPart]) -> list[dict[str, Any]]:
    """The interrupts the `updates` parts announced."""
    return [i for update in data_of(parts, "updates") for i in update.get(INTERRUPT, [])]


def last_ai_text(values: dict[str, Any]) -> str:
    """The content of the last AI message of a state's values ('' without one)."""
    ai = [m for m in values.get("messages", []) if m.get("type") == "ai"]
    content = ai[-1]["content"] if ai else ""
    return content if isinstance(content, str) else str(content)


def scalar_values(values: dict[str, Any]) -> dict[str, Any]:
    """The state's non-empty top-level scalars: a `values` filter every server can match.

    LangGraph's in-memory server compares lists whole, so a filter on `messages` finds
    nothing there; a scalar (DuckLM's `final` answer) is matched the same way everywhere.
    """
    return {k: v for k, v in values.items() if isinstance(v, (str, int, float)) and v != ""}


async def new_thread(client: LangGraphClient, **metadata: Any) -> str:
    """A fresh thread's id."""
    return str((await client.threads.create(metadata=metadata or None))["thread_id"])


async def thread_status_leaves(client: LangGraphClient, thread_id: str, status: str) -> Any:
    """The thread once its status is no longer `status` (polled: there is no event)."""
    async with asyncio.timeout(RUN_TIMEOUT_S):
        while (thread := await client.threads.get(thread_id))["status"] == status:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    return thread


async def run_status_becomes(
    client: LangGraphClient, thread_id: str, run_id: str, statuses: set[str]
) -> dict[str, Any]:
    """The run once its status is one of `statuses` (polled)."""
    async with asyncio.timeout(RUN_TIMEOUT_S):
        while (run := await client.runs.get(thread_id, run_id))["status"] not in statuses:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    return dict(run)
