"""Checkpoint growth: one thread's SQLite checkpoints after 200 one-tool turns.

Two minimal graphs that differ only in the messages channel (LangGraph's default
`add_messages` against DuckLM's `DeltaChannel` alias) run the superstep shape of a
one-tool turn without a model, beside the real DuckLM graph on the scripted server.
Reported: file size, how long reading the state takes, and how turns slow down.

    .venv/bin/python scripts/bench/checkpoint_growth.py
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict

from _common import (
    Reply,
    ScriptedLLM,
    bench_world,
    call,
    duck_settings,
    header,
    median_ms,
    reply,
    table,
    verdict,
)
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from ducklm.graph.state import Messages
from ducklm.runtime.facade import DuckLM

TURNS = 200
READS = 41
MAX_DELTA_MB = 10.0
TOOL_TEXT = "Pond log. " * 50  # ~500 chars, the size of a small file_read result
ANSWER_TEXT = "The pond log says the ducks are fine. " * 8  # ~300 chars
THREAD: Any = {"configurable": {"thread_id": "bench"}}


class DefaultState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


class DeltaState(TypedDict):
    messages: Messages


Step = Callable[[int], Awaitable[object]]
Row = tuple[str, float, float, float, float]  # name, MB, read ms, turn ms first/last 10


@dataclass
class Subject:
    """One thread under test: how to run turn `n`, how to read its state, where it lives."""

    name: str
    db: Path
    saver: AsyncSqliteSaver
    turn: Step
    read: Step


async def call_tool(state: Any) -> dict[str, Any]:
    call_id = f"call_{len(state['messages'])}"
    tool_call = {"name": "file_read", "args": {"path": "pond.md"}, "id": call_id}
    return {"messages": [AIMessage(content="", tool_calls=[tool_call])]}


async def run_tool(state: Any) -> dict[str, Any]:
    call_id = state["messages"][-1].tool_calls[0]["id"]
    return {"messages": [ToolMessage(content=TOOL_TEXT, tool_call_id=call_id, name="file_read")]}


async def answer(state: Any) -> dict[str, Any]:
    return {"messages": [AIMessage(content=ANSWER_TEXT)]}


def build(state: type[Any]) -> StateGraph[Any]:
    """input -> action (tool call) -> tool (result) -> thinker (answer): 4 supersteps."""
    graph = StateGraph(state)
    graph.add_node("action", call_tool)
    graph.add_node("tool", run_tool)
    graph.add_node("thinker", answer)
    graph.add_edge(START, "action")
    graph.add_edge("action", "tool")
    graph.add_edge("tool", "thinker")
    graph.add_edge("thinker", END)
    return graph


async def open_minimal(stack: AsyncExitStack, name: str, state: type[Any], db: Path) -> Subject:
    saver = await stack.enter_async_context(AsyncSqliteSaver.from_conn_string(str(db)))
    graph = build(state).compile(checkpointer=saver)

    async def turn(n: int) -> object:
        return await graph.ainvoke({"messages": [HumanMessage(f"Question {n}?")]}, THREAD)

    return Subject(name, db, saver, turn, lambda _: graph.aget_state(THREAD))


def respond(body: dict[str, Any]) -> Reply:
    """Each DuckLM turn: one file_read, then a plain answer."""
    if body["messages"][-1].get("role") == "tool":
        return reply(ANSWER_TEXT)
    return reply(tool_calls=[call("file_read", path="pond.md")])


async def open_duck(stack: AsyncExitStack, llm: ScriptedLLM, root: Path) -> Subject:
    settings = duck_settings(llm.base_url, root)
    duck = await stack.enter_async_context(DuckLM.open(settings))

    async def turn(n: int) -> None:
        result = await duck.run(f"Question {n}?", thread_id="bench", critic=False, memory=False)
        if result.status != "completed":
            raise RuntimeError(f"turn {n} ended {result.status}: {result.events[-2:]}")

    saver: Any = duck.graph.checkpointer
    name = "DuckLM graph (real, 4 supersteps/turn)"
    return Subject(name, settings.files.checkpoints, saver, turn, lambda _: duck.state("bench"))


async def interleaved(steps: list[Step], count: int) -> list[list[float]]:
    """Seconds of `count` calls of each step, taken in turn so drift hits all alike."""
    seconds: list[list[float]] = [[] for _ in steps]
    for n in range(count):
        for step, times in zip(steps, seconds, strict=True):
            start = time.perf_counter()
            await step(n)
            times.append(time.perf_counter() - start)
    return seconds


def size_mb(db: Path) -> float:
    """The database with any WAL left beside it, in MB."""
    paths = [db, db.with_name(db.name + "-wal")]
    return sum(os.stat(p).st_size for p in paths if p.exists()) / 1e6


async def measure(subjects: list[Subject]) -> list[tuple[list[float], list[float]]]:
    turns = await interleaved([s.turn for s in subjects], TURNS)
    await interleaved([s.read for s in subjects], 1)  # warm caches
    # A collection owed by the write phase would otherwise land in one side's reads.
    gc.collect()
    reads = await interleaved([s.read for s in subjects], READS)
    for subject in subjects:
        # Fold the WAL into the main file so the size is the data, not a log left open.
        await subject.saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return list(zip(turns, reads, strict=True))


async def bench(llm: ScriptedLLM, root: Path) -> list[Row]:
    async with AsyncExitStack() as stack:
        subjects = [
            await open_minimal(
                stack, "minimal, add_messages (default)", DefaultState, root / "default.sqlite"
            ),
            await open_minimal(
                stack, "minimal, DeltaChannel (Messages)", DeltaState, root / "delta.sqlite"
            ),
            await open_duck(stack, llm, root),
        ]
        timings = await measure(subjects)
    # Sizes only now: the connections are closed.
    return [
        (s.name, size_mb(s.db), median_ms(reads), median_ms(turns[:10]), median_ms(turns[-10:]))
        for s, (turns, reads) in zip(subjects, timings, strict=True)
    ]


def report(rows: list[Row]) -> None:
    table(["graph", "checkpoints MB", "read state ms", "turn ms, first 10", "last 10"], rows)
    default, delta, duck = rows
    print(f"storage default / DeltaChannel: {default[1] / delta[1]:.1f}x")
    print(f"read time DeltaChannel / default: {delta[2] / default[2]:.2f}")
    print(f"read time DuckLM graph / minimal default: {duck[2] / default[2]:.2f}\n")
    verdict("minimal DeltaChannel storage", delta[1], MAX_DELTA_MB, " MB")
    verdict("DuckLM graph storage", duck[1], MAX_DELTA_MB, " MB")
    verdict("read state DeltaChannel / default", delta[2] / default[2], 1.0)


def main() -> None:
    header(
        f"checkpoint growth: one thread, {TURNS} one-tool turns, SQLite checkpointer",
        "Minimal graphs (4 supersteps/turn, no model; tool result ~500 chars, answer ~300)",
        "differ only in the messages channel. Size measured after a WAL checkpoint and close;",
        f"read = aget_state (DuckLM: duck.state), median of {READS}; all three interleaved.",
    )
    with bench_world({"pond.md": TOOL_TEXT}, respond) as (root, llm):
        report(asyncio.run(bench(llm, root)))


if __name__ == "__main__":
    main()
