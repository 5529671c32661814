"""`/info` and the one assistant: the graph `ducklm`.

The assistant id is derived from the graph id the way the LangGraph server derives its
system assistants' ids, so DuckLM's server and `langgraph dev` name the same assistant.
"""

from __future__ import annotations

import uuid
from typing import Any

import langgraph.version
from fastapi import APIRouter, HTTPException

from ducklm.server.agent_protocol.deps import DoorDep
from ducklm.server.agent_protocol.responses import Assistant, Info
from ducklm.server.agent_protocol.schemas import AssistantSearch
from ducklm.server.agent_protocol.views import iso_time
from ducklm.server.agent_protocol.wire import WireResponse
from ducklm.server.responses import errors

GRAPH_ID = "ducklm"
# langgraph_api.graph.NAMESPACE_GRAPH: system assistant id = uuid5(namespace, graph_id).
NAMESPACE_GRAPH = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
ASSISTANT_ID = str(uuid.uuid5(NAMESPACE_GRAPH, GRAPH_ID))

router = APIRouter()


def is_assistant(assistant_id: str) -> bool:
    """Whether runs may name `assistant_id`: the assistant's UUID or the graph id."""
    return assistant_id.lower() in (ASSISTANT_ID, GRAPH_ID)


def assistant(created_at: float) -> dict[str, Any]:
    """The assistant in the LangGraph server's shape."""
    return {
        "assistant_id": ASSISTANT_ID,
        "graph_id": GRAPH_ID,
        "name": GRAPH_ID,
        "description": "DuckLM: a local agent over local OpenAI-compatible models.",
        "config": {},
        "context": {},
        "metadata": {"created_by": "system"},
        "version": 1,
        "created_at": iso_time(created_at),
        "updated_at": iso_time(created_at),
    }


@router.get("/info", response_model=Info)
async def info(door: DoorDep) -> WireResponse:
    """What this server is; agent-chat-ui calls it to check the connection."""
    return WireResponse(
        {
            "version": door.version,
            "langgraph_py_version": langgraph.version.__version__,
            "flags": {"assistants": True, "crons": False, "langsmith": False},
            "host": {"kind": "ducklm", "project_id": None, "revision_id": None},
        }
    )


@router.post("/assistants/search", response_model=list[Assistant])
async def search_assistants(body: AssistantSearch, door: DoorDep) -> WireResponse:
    """The assistant, if it matches the filters."""
    found = assistant(door.started_at)
    matches = (
        (body.graph_id is None or body.graph_id == GRAPH_ID)
        and (body.name is None or body.name.lower() in GRAPH_ID)
        and all(found["metadata"].get(k) == v for k, v in (body.metadata or {}).items())
    )
    page = [found][body.offset : body.offset + body.limit] if matches else []
    return WireResponse(page, headers={"X-Pagination-Total": str(int(matches))})


@router.get("/assistants/{assistant_id}", response_model=Assistant, responses=errors(404))
async def get_assistant(assistant_id: str, door: DoorDep) -> WireResponse:
    """The assistant, by its UUID or by the graph id."""
    if not is_assistant(assistant_id):
        raise HTTPException(404, f"assistant {assistant_id} not found")
    return WireResponse(assistant(door.started_at))
