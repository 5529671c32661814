"""Smoke test: the graph of `langgraph.json` served by `langgraph dev`, driven by the SDK.

One turn that needs approval: the model asks to overwrite an existing file, the run stops
at an interrupt in LangChain's human-in-the-loop shape, a resume approves it, the file is
written and the model's answer ends the turn. `langgraph dev` runs its graphs under
blockbuster, so a blocking call anywhere in DuckLM would fail the run and show in its log.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.schema import StreamPart, StreamPartV2

from tests.support.langgraph_dev import REPO_ROOT, LangGraphDev, langgraph_dev, tail, write_config
from tests.support.scripted_llm import Reply, ScriptedLLM, call, reply

pytestmark = pytest.mark.slow

RUN_TIMEOUT_S = 60
PROMPT: dict[str, Any] = {"messages": [{"role": "user", "content": "overwrite a.txt"}]}
ANSWER = "Done: a.txt overwritten."
WRITE = call("file_write", path="a.txt", content="new", overwrite=True)
# The critic and memory_policy roles run after the answer (Studio runs switch nothing
# off) and ask for JSON by schema name; their replies do not depend on the turn.
JSON_REPLIES: dict[str, dict[str, Any]] = {
    "Critique": {"score": 1.0, "summary": "The file was overwritten as asked."},
    "MemoryProposal": {"should_store": False},
}


class ModelScript:
    """Answers the action role from a queue, and the JSON-producing roles by schema."""

    def __init__(self) -> None:
        self.action: deque[Reply] = deque()

    def __call__(self, body: dict[str, Any]) -> Reply:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema in JSON_REPLIES:
            return reply(json.dumps(JSON_REPLIES[schema]))
        return self.action.popleft()


@pytest.fixture
def model(llm: ScriptedLLM) -> ModelScript:
    script = ModelScript()
    llm.set_responder(script)
    return script


@pytest.fixture
def server(tmp_path: Path, workspace: Path, llm: ScriptedLLM) -> Iterator[LangGraphDev]:
    """`langgraph dev` serving the repository's `langgraph.json`, DuckLM set up via env."""
    (workspace / "a.txt").write_text("old\n", encoding="utf-8")
    config = write_config(REPO_ROOT / "langgraph.json", tmp_path / "server")
    log_path = tmp_path / "langgraph-dev.log"
    env = {
        "DUCK_LLM_BASE_URL": llm.base_url,
        "DUCK_DATA_DIR": str(tmp_path / "data"),
        "DUCK_WORKSPACE": str(workspace),
        "DUCK_MODEL_RETRY_INITIAL_INTERVAL": "0.01",
    }
    with langgraph_dev(config, env=env, log_path=log_path) as running:
        yield running
    # Shown by pytest only when the test fails.
    print(f"--- tail of {log_path} ---\n{tail(log_path)}")


@pytest.fixture
async def client(server: LangGraphDev) -> AsyncIterator[LangGraphClient]:
    # api_key=None: never pick up a LangSmith key from the environment.
    async with get_client(url=server.url, api_key=None) as sdk:
        yield sdk


async def collect(parts: AsyncIterator[StreamPart | StreamPartV2]) -> list[StreamPart]:
    """Every part of a run's (v1) stream; fails if the run reported an error."""
    async with asyncio.timeout(RUN_TIMEOUT_S):
        collected = [part async for part in parts if isinstance(part, StreamPart)]
    errors = [part.data for part in collected if part.event == "error"]
    assert not errors, f"the run failed: {errors}"
    return collected


async def test_approval_round_trip_through_langgraph_dev(
    server: LangGraphDev,
    client: LangGraphClient,
    llm: ScriptedLLM,
    model: ModelScript,
    workspace: Path,
) -> None:
    thread_id = (await client.threads.create())["thread_id"]

    # 1. The model asks to overwrite an existing file: the run stops for approval.
    model.action.append(reply(tool_calls=[WRITE]))
    first = await collect(
        client.runs.stream(
            thread_id,
            "ducklm",
            input=PROMPT,
            stream_mode=["updates", "custom"],
        )
    )
    assert llm.requests, "the server never called the scripted model: is it ours?"
    interrupts = [
        interrupt
        for part in first
        if part.event == "updates"
        for interrupt in part.data.get("__interrupt__", [])
    ]
    assert len(interrupts) == 1, first
    request = interrupts[0]["value"]
    (action,) = request["action_requests"]
    assert (action["name"], action["args"]) == ("file_write", WRITE.args)
    # The reason, then the change as a diff.
    assert action["description"].startswith("overwrite existing file a.txt:\n--- a/a.txt\n")
    assert "\n-old\n" in action["description"] and "\n+new\n" in action["description"]
    assert request["review_configs"] == [
        {
            "action_name": "file_write",
            "allowed_decisions": ["approve", "edit", "reject", "allow_forever"],
        }
    ]
    assert await asyncio.to_thread((workspace / "a.txt").read_text) == "old\n"

    # The thread shows the same question, both per task and for the whole thread.
    state = await client.threads.get_state(thread_id)
    assert state["next"] == ["tool"]
    [task] = state["tasks"]
    assert [i["value"] for i in task["interrupts"]] == [request]
    assert [i["value"] for i in state["interrupts"]] == [request]
    assert (await client.threads.get(thread_id))["status"] == "interrupted"

    # 2. Approve. A plain resume value answers the one open interrupt.
    model.action.append(reply(ANSWER))
    second = await collect(
        client.runs.stream(
            thread_id,
            "ducklm",
            command={"resume": {"decisions": [{"type": "approve"}]}},
            stream_mode=["updates", "custom"],
        )
    )
    assert not any("__interrupt__" in part.data for part in second if part.event == "updates")
    finished = [
        part.data
        for part in second
        if part.event == "custom" and part.data.get("type") == "tool_call_finished"
    ]
    assert [(e["tool"], e["status"], e["decision"]) for e in finished] == [
        ("file_write", "success", "approve")
    ]
    assert await asyncio.to_thread((workspace / "a.txt").read_text) == "new"

    state = await client.threads.get_state(thread_id)
    assert state["next"] == []
    assert state["interrupts"] == []
    values = state["values"]
    assert isinstance(values, dict)
    assert values["messages"][-1]["type"] == "ai"
    assert values["messages"][-1]["content"] == ANSWER
    assert values["final"] == ANSWER
    assert (await client.threads.get(thread_id))["status"] == "idle"
    assert not model.action, "scripted action replies were left over"

    # 3. Nothing blocked the server's event loop.
    blocking = await asyncio.to_thread(server.blocking_lines)
    assert not blocking, "\n".join(blocking)
