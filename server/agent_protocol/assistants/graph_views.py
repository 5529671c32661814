"""The graph as Studio draws it and the JSON schemas it shows, as the LangGraph server sends them.

`graph_json` is `GET /assistants/{id}/graph` (nodes and edges; `xray` opens subgraphs);
`graph_schemas` is `/schemas` and, per subgraph, `/subgraphs`. Every assistant shows the
one graph: an assistant configures a run, not the graph's shape. The context schema is
the per-run switches a client may send (`RunSwitches`), as the graph `langgraph dev`
serves declares it; DuckLM's full run context is not JSON.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import HTTPException
from langchain_core.utils.pydantic import create_model
from langgraph.pregel import Pregel
from pydantic import TypeAdapter

from ducklm.graph.context import RunSwitches

AnyGraph = Pregel[Any, Any, Any, Any]

log = logging.getLogger(__name__)

BAD_XRAY = "Invalid xray value: true, false or a depth of 1 or more"


def read_xray(value: str | None) -> bool | int:
    """The `xray` query parameter: `true`, `false` or a positive depth, else a `422`."""
    if value in (None, "", "false", "False"):
        return False
    if value in ("true", "True"):
        return True
    try:
        depth = int(value or "")
    except ValueError:
        raise HTTPException(422, BAD_XRAY) from None
    if depth <= 0:
        raise HTTPException(422, BAD_XRAY)
    return depth


async def graph_json(graph: AnyGraph, xray: bool | int) -> dict[str, Any]:
    """The drawable graph's JSON, without the node ids LangGraph's server leaves out."""
    drawn = (await graph.aget_graph(xray=xray)).to_json()
    for node in drawn.get("nodes", []):
        data = node.get("data")
        if isinstance(data, dict):
            data.pop("id", None)
    return drawn


def graph_schemas(graph: AnyGraph) -> dict[str, Any]:
    """`input_schema`, `output_schema`, `state_schema`, `config_schema`, `context_schema`.

    A schema LangGraph cannot build is `None`, as on the LangGraph server.
    """
    return {
        "input_schema": _tried(graph.get_input_jsonschema, "input"),
        "output_schema": _tried(graph.get_output_jsonschema, "output"),
        "state_schema": _tried(lambda: _state_schema(graph), "state"),
        "config_schema": {},
        "context_schema": _tried(TypeAdapter(RunSwitches).json_schema, "context"),
    }


async def subgraph_schemas(
    graph: AnyGraph, namespace: str | None, *, recurse: bool
) -> dict[str, dict[str, Any]]:
    """The schemas of each subgraph, by its namespace."""
    return {
        name: graph_schemas(subgraph)  # type: ignore[arg-type]  # a compiled graph's are Pregel
        async for name, subgraph in graph.aget_subgraphs(namespace=namespace, recurse=recurse)
    }


def _state_schema(graph: AnyGraph) -> dict[str, Any]:
    """Every output channel by its update type (`Any` where that has no schema)."""
    fields: dict[str, Any] = {}
    for name in graph.stream_channels_list:
        kind = graph.channels[name].UpdateType  # type: ignore[union-attr]  # output: channels
        try:
            create_model(name, __root__=(kind, None)).model_json_schema()
            fields[name] = (kind, None)
        except Exception:
            fields[name] = (Any, None)
    return create_model(graph.get_name("State"), **fields).model_json_schema()


def _tried(build: Any, what: str) -> dict[str, Any] | None:
    try:
        schema: dict[str, Any] = build()
    except Exception:
        log.warning("the graph's %s schema could not be built", what, exc_info=True)
        return None
    return schema
