"""The graph's stream as the runner reads it: `GraphChunk`s, whatever a door asked for.

By default that is `graph.astream` in the modes the runner reads (`updates`, and the
ones a door watches). A door may ask for two more things (`GraphOptions`):

- `subgraphs`: chunks of subgraphs too, each with the namespace of the task that ran it
  (`("node:task_id", ...)`); the root graph's have `()`.
- `events`: LangChain's `astream_events` (v2) of the run. The graph is then run through
  `astream_events` instead, as the LangGraph server does for its `events` mode: the
  root graph's `on_chain_stream` events carry the same chunks as `astream` would give
  (unwrapped here), every other event is a chunk of mode `events`. Events tagged
  `langsmith:hidden` are left out, as the LangGraph server leaves them out.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from ducklm.runtime.channel import GraphChunk

EVENTS = "events"
HIDDEN = "langsmith:hidden"
Stream = AsyncGenerator[Any, None]


async def graph_chunks(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    graph_input: Any,
    config: RunnableConfig,
    *,
    modes: list[str],
    subgraphs: bool = False,
    events: bool = False,
    **kwargs: Any,
) -> AsyncIterator[GraphChunk]:
    """The graph's run on `graph_input` as chunks of `modes` (and `events`, if asked).

    `kwargs` go to the graph's stream as they are (`context`, `interrupt_before`...).
    The graph's stream is closed when this one is, however it ends.
    """
    options = {"stream_mode": modes, "subgraphs": subgraphs, **kwargs}
    if not events:
        stream: Stream = cast(Stream, graph.astream(graph_input, config, **options))
        async with aclosing(stream):
            async for item in stream:
                yield _chunk(item, subgraphs)
        return
    root = str(config.get("run_id"))
    found = cast(Stream, graph.astream_events(graph_input, config, version="v2", **options))
    async with aclosing(found):
        async for item in found:
            if HIDDEN in (item.get("tags") or ()):
                continue
            if item["event"] == "on_chain_stream" and item.get("run_id") == root:
                yield _chunk(item["data"]["chunk"], subgraphs)
            else:
                yield GraphChunk(EVENTS, item)


def _chunk(item: tuple[Any, ...], subgraphs: bool) -> GraphChunk:
    """`(mode, data)`, or `(namespace, mode, data)` when subgraphs stream too."""
    if subgraphs:
        namespace, mode, data = item
        return GraphChunk(mode, data, tuple(namespace))
    mode, data = item
    return GraphChunk(mode, data)
