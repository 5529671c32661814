"""The graph's stream as the runner reads it and the Agent Protocol door names it.

A real two-level LangGraph graph (a node that is a compiled subgraph), no model: DuckLM's
own graph has no subgraphs, so this is where `mode|namespace` events are checked.
`events` must carry the same root chunks as `astream`, unwrapped, and every other
LangChain event as mode `events`; `debug` checkpoints get the LangGraph server's
`checkpoint` and `parent_checkpoint`.
"""

from __future__ import annotations

import copy
import operator
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph

from ducklm.runtime.channel import GraphChunk
from ducklm.runtime.graph_stream import EVENTS, graph_chunks
from ducklm.server.agent_protocol.streaming.debug import debug_payload
from ducklm.server.agent_protocol.streaming.events import map_items
from ducklm.server.agent_protocol.streaming.joining import mode_of


class Notes(TypedDict):
    """The test graphs' state: notes appended by each node."""

    notes: Annotated[list[str], operator.add]


async def inner_note(state: Notes) -> dict[str, Any]:
    """The subgraph's one node."""
    return {"notes": ["inner"]}


async def outer_note(state: Notes) -> dict[str, Any]:
    """The root graph's node after the subgraph."""
    return {"notes": ["outer"]}


def _graph() -> Any:
    inner = StateGraph(Notes).add_node(inner_note).add_edge(START, "inner_note").compile()
    outer = StateGraph(Notes).add_node("nested", inner).add_node(outer_note)
    outer.add_edge(START, "nested").add_edge("nested", "outer_note")
    return outer.compile(checkpointer=InMemorySaver())


def _config() -> RunnableConfig:
    return {"configurable": {"thread_id": str(uuid.uuid4())}, "run_id": uuid.uuid4()}


async def _all(chunks: AsyncIterator[GraphChunk]) -> list[GraphChunk]:
    return [chunk async for chunk in chunks]


async def test_subgraph_chunks_carry_their_namespace() -> None:
    chunks = await _all(
        graph_chunks(_graph(), {"notes": []}, _config(), modes=["updates"], subgraphs=True)
    )
    spaces = [(c.namespace[0].split(":")[0] if c.namespace else "", c.mode) for c in chunks]
    assert spaces == [("nested", "updates"), ("", "updates"), ("", "updates")]
    assert chunks[0].data == {"inner_note": {"notes": ["inner"]}}
    assert ":" in chunks[0].namespace[0]  # `node:task_id`, as LangGraph names it


async def test_without_subgraphs_only_the_root_streams() -> None:
    chunks = await _all(graph_chunks(_graph(), {"notes": []}, _config(), modes=["updates"]))
    assert [c.namespace for c in chunks] == [(), ()]


async def test_events_unwrap_the_root_stream_and_keep_the_rest() -> None:
    config = _config()
    plain = await _all(graph_chunks(_graph(), {"notes": []}, _config(), modes=["values"]))
    chunks = await _all(
        graph_chunks(_graph(), {"notes": []}, config, modes=["values"], events=True)
    )
    assert [c.data for c in chunks if c.mode == "values"] == [c.data for c in plain]
    events = [c.data for c in chunks if c.mode == EVENTS]
    root = str(config["run_id"])
    assert (events[0]["event"], events[0]["run_id"]) == ("on_chain_start", root)
    assert (events[-1]["event"], events[-1]["run_id"]) == ("on_chain_end", root)
    assert not [e for e in events if e["event"] == "on_chain_stream" and e["run_id"] == root]
    assert {"nested", "inner_note", "outer_note"} <= {e["name"] for e in events}


async def test_the_door_names_subgraph_events_mode_and_namespace() -> None:
    chunks = graph_chunks(
        _graph(), {"notes": []}, _config(), modes=["updates", "debug"], subgraphs=True
    )
    named = [name async for name, _ in map_items(chunks, ("updates", "debug"))]
    nested = [n for n in named if "|" in n]
    assert nested and all(n.split("|")[1].startswith("nested:") for n in nested)
    assert {mode_of(n) for n in named} == {"updates", "debug"}
    assert "updates" in named and "debug" in named  # the root's keep their mode's name


async def test_a_debug_checkpoint_as_the_langgraph_server_sends_it() -> None:
    config = _config()
    chunks = await _all(graph_chunks(_graph(), {"notes": []}, config, modes=["debug"]))
    checkpoints = [c.data for c in chunks if c.data["type"] == "checkpoint"]
    kept = copy.deepcopy(checkpoints)
    sent = [debug_payload(c)["payload"] for c in checkpoints]
    assert checkpoints == kept, "the run's own chunks are never changed"
    thread_id = config["configurable"]["thread_id"]
    assert all(p["checkpoint"]["thread_id"] == thread_id for p in sent)
    assert sent[0]["parent_checkpoint"] is None
    assert [p["parent_checkpoint"] for p in sent[1:]] == [p["checkpoint"] for p in sent[:-1]]
    # The subgraph's task points at its checkpoints by `checkpoint`, not `state`.
    nested = [t for p in sent for t in p["tasks"] if t["name"] == "nested"]
    assert nested and all("state" not in t for t in nested)
    assert any(t["checkpoint"]["checkpoint_ns"].startswith("nested:") for t in nested)
