"""Helpers for the Agent Protocol run tests: prompts, polling, waiting for the model."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.schema import StreamPart, StreamPartV2

from ducklm.server.agent_protocol.common.deps import Door
from tests.support.scripted_llm import ScriptedLLM
from tests.support.server import Served

RUN_TIMEOUT_S = 30
QUIET = {"critic": False, "memory": False}


def prompt(text: str = "hi") -> dict[str, Any]:
    """A run's input: one human message."""
    return {"messages": [{"role": "user", "content": text}]}


def door_of(served: Served) -> Door:
    """The Agent Protocol door of a served DuckLM: its scheduler, runs and stores."""
    door: Door = served.server.config.app.state.agent_protocol
    return door


async def new_thread(client: LangGraphClient) -> str:
    """A new thread's id."""
    return str((await client.threads.create())["thread_id"])


async def requests_reach(llm: ScriptedLLM, count: int) -> None:
    """Wait until the scripted model has had `count` requests, or fail."""
    async with asyncio.timeout(RUN_TIMEOUT_S):
        while len(llm.requests) < count:  # noqa: ASYNC110  the model server is a thread
            await asyncio.sleep(0.02)


async def status_becomes(client: LangGraphClient, thread_id: str, run_id: str, status: str) -> None:
    """Wait until the run's status is `status`, or fail."""
    async with asyncio.timeout(RUN_TIMEOUT_S):
        while (await client.runs.get(thread_id, run_id))["status"] != status:  # noqa: ASYNC110
            await asyncio.sleep(0.02)


async def collect(parts: AsyncIterator[StreamPart | StreamPartV2]) -> list[StreamPart]:
    """Every part of a (v1) stream, within the run timeout."""
    async with asyncio.timeout(RUN_TIMEOUT_S):
        return [part async for part in parts if isinstance(part, StreamPart)]


def human_texts(values: dict[str, Any]) -> list[str]:
    """The contents of the state's human messages, in order."""
    return [m["content"] for m in values.get("messages", []) if m["type"] == "human"]
