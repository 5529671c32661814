"""`GET /assistants/{id}/graph`, `/schemas` and `/subgraphs`: what Studio shows of the graph.

Every assistant shows the one graph (`assistants/graph_views.py`); an unknown assistant is a `404`.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException

from ducklm.runtime.facade import DuckLM
from ducklm.server.agent_protocol.assistants.config import run_assistant
from ducklm.server.agent_protocol.assistants.graph_views import (
    graph_json,
    graph_schemas,
    read_xray,
    subgraph_schemas,
)
from ducklm.server.agent_protocol.common.deps import Door, DoorDep, DuckDep
from ducklm.server.agent_protocol.common.identity import GRAPH_ID
from ducklm.server.agent_protocol.common.responses import (
    AssistantGraph,
    AssistantSchemas,
    GraphSchemas,
)
from ducklm.server.agent_protocol.common.wire import WireResponse
from ducklm.server.responses import errors

router = APIRouter()


@router.get(
    "/assistants/{assistant_id}/graph", response_model=AssistantGraph, responses=errors(404, 422)
)
async def get_graph(
    assistant_id: str, door: DoorDep, duck: DuckDep, xray: str | None = None
) -> WireResponse:
    """The graph's nodes and edges; `xray` (true or a depth) draws subgraphs inside."""
    depth = read_xray(xray)
    await run_assistant(assistant_id, door.assistants)
    return WireResponse(await graph_json(duck.graph, depth))


@router.get(
    "/assistants/{assistant_id}/schemas", response_model=AssistantSchemas, responses=errors(404)
)
async def get_schemas(assistant_id: str, door: DoorDep, duck: DuckDep) -> WireResponse:
    """The graph's input, output, state, config and context schemas."""
    await run_assistant(assistant_id, door.assistants)
    return WireResponse({"graph_id": GRAPH_ID, **graph_schemas(duck.graph)})


@router.get(
    "/assistants/{assistant_id}/subgraphs",
    response_model=dict[str, GraphSchemas],
    responses=errors(404),
)
async def get_subgraphs(
    assistant_id: str, door: DoorDep, duck: DuckDep, recurse: bool = False
) -> WireResponse:
    """The schemas of the graph's subgraphs, by namespace (DuckLM's graph has none)."""
    return WireResponse(await _subgraphs(assistant_id, None, recurse, door, duck))


@router.get(
    "/assistants/{assistant_id}/subgraphs/{namespace}",
    response_model=dict[str, GraphSchemas],
    responses=errors(404),
)
async def get_subgraphs_in(
    assistant_id: str, namespace: str, door: DoorDep, duck: DuckDep, recurse: bool = False
) -> WireResponse:
    """The schemas of the subgraphs under `namespace`."""
    return WireResponse(await _subgraphs(assistant_id, namespace, recurse, door, duck))


async def _subgraphs(
    assistant_id: str, namespace: str | None, recurse: bool, door: Door, duck: DuckLM
) -> dict[str, Any]:
    await run_assistant(assistant_id, door.assistants)
    try:
        return await subgraph_schemas(duck.graph, namespace, recurse=recurse)
    except NotImplementedError:
        raise HTTPException(422, "The graph does not support visualization") from None
