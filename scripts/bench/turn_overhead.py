"""Turn overhead: one turn with one tool call, DuckLM against LangGraph's prebuilt ReAct agent.

Both agents talk to the same scripted server (no model latency, so only the framework's
own cost is left), both checkpoint to SQLite in a file of their own, and both read the
same file with an equivalent `file_read` tool. Each repetition is a fresh thread.

    .venv/bin/python scripts/bench/turn_overhead.py
"""

from __future__ import annotations

import asyncio
import time
import uuid
import warnings
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from _common import (
    Reply,
    ScriptedLLM,
    bench_world,
    call,
    duck_settings,
    header,
    median_ms,
    p90_ms,
    reply,
    table,
    verdict,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, StructuredTool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.prebuilt import create_react_agent
from langgraph.warnings import LangGraphDeprecationWarning

from ducklm.models.prompts import load_prompts
from ducklm.models.roles import load_roles
from ducklm.runtime.facade import DuckLM
from ducklm.stores.checkpoints import open_checkpointer
from ducklm.tools.registry import default_tools

WARMUP = 3
REPS = 30
TARGET_RATIO = 1.2
QUESTION = "What is in notes.md?"
ANSWER = "notes.md holds the pond plan: three ducks, one heron."
NOTES = "# Pond plan\n" + "Three ducks, one heron, and a lot of bread crumbs.\n" * 10

Turn = Callable[[], Awaitable[None]]
Sample = tuple[float, int]  # seconds, model requests
Summary = tuple[str, float, float, float, str]  # name, median, p90, ratio, calls per turn


def respond(body: dict[str, Any]) -> Reply:
    """Same behaviour for both agents whatever the order: answer after a tool result."""
    if body["messages"][-1].get("role") == "tool":
        return reply(ANSWER)
    return reply(tool_calls=[call("file_read", path="notes.md")])


def react_tools(workspace: Path) -> list[BaseTool]:
    """DuckLM's own tools for the ReAct side: same names, descriptions and argument
    schemas (so both send the same request), with the workspace filled in here because
    the prebuilt tool node does not inject it."""

    def wrap(inner: BaseTool) -> BaseTool:
        async def run(**args: Any) -> Any:
            return await inner.ainvoke({**args, "workspace": workspace})

        return StructuredTool(
            name=inner.name,
            description=inner.description,
            args_schema=inner.tool_call_schema,  # type: ignore[arg-type]
            coroutine=run,
        )

    return [wrap(t) for t in default_tools().tools]


def action_prompt(workspace: Path) -> str:
    """DuckLM's action system prompt, which ReAct sends too."""
    roles = load_roles()
    return load_prompts(roles).render("action", workspace=str(workspace), max_steps=4)


def react_turn(
    model: BaseChatModel,
    tools: list[BaseTool],
    prompt: str,
    saver: BaseCheckpointSaver[Any] | None,
) -> Turn:
    # Deprecated in favour of langchain.agents.create_agent, but still LangGraph's own
    # prebuilt loop, which is the baseline the target is stated against.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecationWarning)
        agent = create_react_agent(model, tools, prompt=prompt, checkpointer=saver)

    async def turn() -> None:
        config: Any = {"configurable": {"thread_id": str(uuid.uuid4())}}
        # Consumed as a stream of updates, as DuckLM's runner consumes its graph.
        updates = [u async for u in agent.astream({"messages": [("user", QUESTION)]}, config)]
        final = updates[-1]["agent"]["messages"][-1]
        if final.text != ANSWER:
            raise RuntimeError(f"ReAct answered {final.text!r}")

    return turn


def duck_turn(duck: DuckLM) -> Turn:
    async def turn() -> None:
        result = await duck.run(QUESTION, critic=False, memory=False)
        if result.answer != ANSWER:
            raise RuntimeError(f"DuckLM answered {result.answer!r} ({result.status})")

    return turn


async def open_agents(stack: AsyncExitStack, llm: ScriptedLLM, root: Path) -> dict[str, Turn]:
    duck = await stack.enter_async_context(DuckLM.open(duck_settings(llm.base_url, root)))
    # The same checkpointer as DuckLM's (WAL, synchronous=NORMAL), so the ratio measures
    # the graphs, not SQLite's fsync setting.
    saver = await stack.enter_async_context(open_checkpointer(root / "react.sqlite"))
    # streaming=True: DuckLM streams its action call, so both parse the same SSE replies.
    model = await asyncio.to_thread(
        ChatOpenAI,
        model="scripted",
        base_url=llm.base_url,
        api_key="bench",  # type: ignore[arg-type]
        max_retries=0,
        streaming=True,
    )
    tools = react_tools(root / "workspace")
    prompt = await asyncio.to_thread(action_prompt, root / "workspace")
    return {
        "DuckLM (sqlite)": duck_turn(duck),
        "ReAct (sqlite)": react_turn(model, tools, prompt, saver),
        "ReAct (no checkpointer)": react_turn(model, tools, prompt, None),
    }


async def timed(turn: Turn, llm: ScriptedLLM) -> Sample:
    """Seconds one turn took, and how many model requests it made."""
    before = len(llm.requests)
    start = time.perf_counter()
    await turn()
    return time.perf_counter() - start, len(llm.requests) - before


async def measure(agents: dict[str, Turn], llm: ScriptedLLM) -> dict[str, list[Sample]]:
    for turn in agents.values():
        for _ in range(WARMUP):
            await timed(turn, llm)
    samples: dict[str, list[Sample]] = {name: [] for name in agents}
    # Interleaved, so drift (CPU frequency, page cache, SQLite file growth) hits all alike.
    for _ in range(REPS):
        for name, turn in agents.items():
            samples[name].append(await timed(turn, llm))
    return samples


def summary(name: str, runs: list[Sample], baseline_ms: float) -> Summary:
    seconds = [s for s, _ in runs]
    calls = "/".join(str(n) for n in sorted({n for _, n in runs}))
    return name, median_ms(seconds), p90_ms(seconds), median_ms(seconds) / baseline_ms, calls


def report(samples: dict[str, list[Sample]]) -> None:
    baseline_ms = median_ms([s for s, _ in samples["ReAct (sqlite)"]])
    rows = [summary(name, runs, baseline_ms) for name, runs in samples.items()]
    table(["agent", "median ms", "p90 ms", "vs ReAct (sqlite)", "model calls/turn"], rows)
    # The comparison is only fair if DuckLM reused the action reply as the answer.
    same = all(row[4] == "2" for row in rows)
    print(f"every agent made exactly 2 model calls per turn: {'yes' if same else 'NO'}\n")
    verdict("DuckLM / ReAct (sqlite), median", rows[0][3], TARGET_RATIO)


async def bench(llm: ScriptedLLM, root: Path) -> None:
    async with AsyncExitStack() as stack:
        agents = await open_agents(stack, llm, root)
        report(await measure(agents, llm))


def main() -> None:
    header(
        "turn overhead: one turn, one file_read tool call, zero model latency",
        "DuckLM.run(critic=False, memory=False) vs langgraph.prebuilt.create_react_agent,",
        f"same scripted server and SQLite checkpointer; fresh thread per turn; {WARMUP} warm-up",
        f"turns each, then {REPS} interleaved repetitions each.",
    )
    with bench_world({"notes.md": NOTES}, respond) as (root, llm):
        asyncio.run(bench(llm, root))


if __name__ == "__main__":
    main()
