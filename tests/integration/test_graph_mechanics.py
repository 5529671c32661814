"""Graph mechanics below the facade: a run without context, and a resume the node re-asks.

LangGraph Studio and Agent Protocol clients reach the graph directly, without DuckLM's
facade to check their input first, so the graph itself must cope.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from ducklm.config.settings import Settings
from ducklm.graph.builder import DuckGraph, build_graph
from ducklm.graph.dependencies import Dependencies, open_dependencies
from ducklm.turn.prompting.transcript import NOT_RUN
from tests.support.scripted_llm import ScriptedLLM, call, reply

CONFIG: Any = {"configurable": {"thread_id": "g1"}}
# What a LangGraph server sends: JSON, coerced into the graph's context schema.
CORE_ONLY = {"critic": False, "memory": False}


@pytest.fixture
async def deps(settings: Settings) -> AsyncIterator[Dependencies]:
    async with open_dependencies(settings) as opened:
        yield opened


@pytest.fixture
def studio_graph(deps: Dependencies) -> DuckGraph:
    return build_graph(default_context=deps.context).compile(checkpointer=InMemorySaver())


async def test_a_run_without_context_uses_the_default(
    studio_graph: DuckGraph, llm: ScriptedLLM
) -> None:
    llm.script(reply("Hello from the graph."))
    ask = {"messages": [{"role": "user", "content": "tell me about the pond"}]}
    result = await studio_graph.ainvoke(ask, CONFIG)
    assert result["final"] == "Hello from the graph."
    assert [m.type for m in result["messages"]] == ["human", "ai"]
    # Without switches the critic and the memory policy run too (one request each); a
    # greeting would have no critic (the router leaves chit-chat unreviewed).
    assert len(llm.requests) == 3


async def test_switches_from_a_json_context(studio_graph: DuckGraph, llm: ScriptedLLM) -> None:
    llm.script(reply("Just the answer."))
    message = {"messages": [{"role": "user", "content": "hi"}]}
    result = await studio_graph.ainvoke(message, CONFIG, context=CORE_ONLY)
    assert result["final"] == "Just the answer."
    assert len(llm.requests) == 1


async def test_an_unusable_resume_is_asked_again(
    studio_graph: DuckGraph, llm: ScriptedLLM, workspace: Path
) -> None:
    target = workspace / "a.txt"
    await asyncio.to_thread(target.write_text, "old")
    llm.script(reply(tool_calls=[call("file_write", path="a.txt", content="new", overwrite=True)]))
    message = {"messages": [{"role": "user", "content": "overwrite"}]}
    await studio_graph.ainvoke(message, CONFIG, context=CORE_ONLY)
    (first,) = (await studio_graph.aget_state(CONFIG)).interrupts

    await studio_graph.ainvoke(
        Command(resume={"decisions": [{"type": "sure"}]}), CONFIG, context=CORE_ONLY
    )
    (again,) = (await studio_graph.aget_state(CONFIG)).interrupts
    assert again.value["action_requests"] == first.value["action_requests"]
    assert "type 'sure' is not one of" in again.value["error"]
    assert await asyncio.to_thread(target.read_text) == "old"

    llm.script(reply("Done."))
    result = await studio_graph.ainvoke(
        Command(resume={"decisions": [{"type": "approve"}]}), CONFIG
    )
    assert result["final"] == "Done."
    assert await asyncio.to_thread(target.read_text) == "new"
    assert not (await studio_graph.aget_state(CONFIG)).interrupts


async def test_dangling_tool_calls_are_answered_for_the_model(
    studio_graph: DuckGraph, llm: ScriptedLLM
) -> None:
    """A run that died mid-tool leaves a call without a result; the next turn still works."""
    dangling = AIMessage(content="", tool_calls=[{"name": "list_dir", "args": {}, "id": "c1"}])
    await studio_graph.aupdate_state(
        CONFIG, {"messages": [HumanMessage("look"), dangling]}, as_node="action"
    )
    llm.script(reply("Fine now."))
    again = {"messages": [{"role": "user", "content": "again"}]}
    await studio_graph.ainvoke(again, CONFIG, context=CORE_ONLY)
    sent = llm.requests[-1]["messages"]
    tool_results = [m for m in sent if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tool_results] == [("c1", NOT_RUN)]
