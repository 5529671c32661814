"""`/info` and the one assistant: the graph `ducklm`.

Its ids are in `identity.py`.
"""

from __future__ import annotations

from typing import Any

import langgraph.version
from fastapi import APIRouter, HTTPException

from ducklm.server.agent_protocol.deps import DoorDep
from ducklm.server.agent_protocol.identity import ALIASES, ASSISTANT_ID, GRAPH_ID, is_assistant
from ducklm.server.agent_protocol.responses import Assistant, Info
from ducklm.server.agent_protocol.schemas import AssistantSearch
from ducklm.server.agent_protocol.views import iso_time
from ducklm.server.agent_protocol.wire import WireResponse
from ducklm.server.responses import errors

router = APIRouter()

FLAGS = {
    "assistants": True,
    "crons": False,
    "langsmith": False,
    # What this door serves beyond the LangGraph server's defaults being on:
    "background_runs": True,
    "resumable_streams": True,
    "multitask_strategies": True,
}


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
            "flags": FLAGS,
            "host": {"kind": "ducklm", "project_id": None, "revision_id": None},
        }
    )


@router.post("/assistants/search", response_model=list[Assistant])
async def search_assistants(body: AssistantSearch, door: DoorDep) -> WireResponse:
    """The assistant, if it matches the filters."""
    found = assistant(door.started_at)
    matches = (
        (body.graph_id is None or body.graph_id in ALIASES)
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


__all__ = ["ALIASES", "ASSISTANT_ID", "GRAPH_ID", "assistant", "is_assistant", "router"]
