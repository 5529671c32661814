"""`/info` and `/assistants`: the graph's own assistant, and named DuckLM configurations.

The graph's own assistant (`ducklm`, ids in `common/identity.py`) is always there and cannot be
changed. A client's assistants (`POST /assistants`) are stored with every version
(`ducklm/stores/agent_protocol/assistants.py`); what of their configuration a run honours is
`assistants/config.py`'s. Every assistant is of the one graph: a search for another graph
is a `404`, as on the LangGraph server.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import langgraph.version
from fastapi import APIRouter, HTTPException, Response

from ducklm.server.agent_protocol.assistants.config import checked_configuration
from ducklm.server.agent_protocol.assistants.schemas import (
    AssistantCount,
    AssistantCreate,
    AssistantLatest,
    AssistantPatch,
    AssistantSearch,
    AssistantVersions,
)
from ducklm.server.agent_protocol.assistants.views import (
    assistant_view,
    system_assistant,
    system_version,
    version_view,
)
from ducklm.server.agent_protocol.common.deps import Door, DoorDep, DuckDep, HubDep
from ducklm.server.agent_protocol.common.filters import contains
from ducklm.server.agent_protocol.common.identity import (
    ALIASES,
    ASSISTANT_ID,
    GRAPH_ID,
    is_assistant,
)
from ducklm.server.agent_protocol.common.responses import Assistant, AssistantVersionView, Info
from ducklm.server.agent_protocol.common.wire import WireResponse
from ducklm.server.agent_protocol.threads.retention import delete_assistant_threads
from ducklm.server.responses import errors
from ducklm.stores.agent_protocol.assistants import AssistantRow, AssistantVersion

router = APIRouter()

FLAGS = {
    "assistants": True,
    "crons": True,
    "langsmith": False,
    "langsmith_tracing_replicas": False,
    "langsmith_tracing_session_on_runs": False,
    # What this door serves beyond the LangGraph server's defaults being on:
    "background_runs": True,
    "resumable_streams": True,
    "multitask_strategies": True,
    "assistant_versions": True,
    "thread_copy": True,
    "thread_count": True,
    "thread_ttl": True,
    "thread_ttl_keep_latest": False,
}
NO_GRAPH = "Graph '{graph_id}' not found. Expected one of: ['" + GRAPH_ID + "']"
NOT_FOUND = "Assistant {assistant_id} not found"
EXISTS = "Assistant {assistant_id} already exists"
NO_VERSION = "Version {version} not found for assistant {assistant_id}"
READ_ONLY = (
    "assistant {assistant_id} is the graph's own assistant and cannot be changed: "
    "create one (POST /assistants)"
)


@router.get("/info", response_model=Info)
async def info(door: DoorDep) -> WireResponse:
    """What this server is and serves; agent-chat-ui calls it to check the connection."""
    return WireResponse(
        {
            "version": door.version,
            "langgraph_py_version": langgraph.version.__version__,
            "flags": FLAGS,
            "host": {"kind": "ducklm", "project_id": None, "revision_id": None},
        }
    )


@router.post("/assistants/search", response_model=list[Assistant], responses=errors(404))
async def search_assistants(body: AssistantSearch, door: DoorDep) -> WireResponse:
    """Assistants matching graph, name and metadata; sorted and paged."""
    found = await _matching(body, door)
    key = body.sort_by or "created_at"
    found.sort(
        key=lambda a: str(a[key]).lower(), reverse=(body.sort_order or "desc").lower() == "desc"
    )
    page = found[body.offset : body.offset + body.limit]
    if body.select:
        page = [{k: a[k] for k in body.select} for a in page]
    headers = {"X-Pagination-Total": str(len(found))}
    if body.offset + body.limit < len(found):
        headers["X-Pagination-Next"] = str(body.offset + body.limit)
    return WireResponse(page, headers=headers)


@router.post("/assistants/count", response_model=int, responses=errors(404))
async def count_assistants(body: AssistantCount, door: DoorDep) -> WireResponse:
    """How many assistants match graph, name and metadata."""
    return WireResponse(len(await _matching(body, door)))


@router.post("/assistants", response_model=Assistant, responses=errors(400, 404, 409))
async def create_assistant(body: AssistantCreate, door: DoorDep, duck: DuckDep) -> WireResponse:
    """A new assistant at version 1; `if_exists: do_nothing` returns the existing one."""
    _check_graph(body.graph_id)
    assistant_id = str(body.assistant_id or uuid.uuid4())
    if is_assistant(assistant_id):
        raise HTTPException(409, EXISTS.format(assistant_id=assistant_id))
    config, context = await checked_configuration(body.config, body.context, duck.settings)
    first = AssistantVersion(
        assistant_id=assistant_id,
        version=1,
        graph_id=GRAPH_ID,
        name=body.name or "Untitled",
        description=body.description,
        config=config,
        context=context,
        metadata=body.metadata or {},
        created_at=time.time(),
    )
    if not await door.assistants.create(first) and body.if_exists == "raise":
        raise HTTPException(409, EXISTS.format(assistant_id=assistant_id))
    return WireResponse(assistant_view(await _stored(assistant_id, door)))


@router.get("/assistants/{assistant_id}", response_model=Assistant, responses=errors(404))
async def get_assistant(assistant_id: str, door: DoorDep) -> WireResponse:
    """An assistant, by its id (the graph's own one also by the graph id)."""
    if is_assistant(assistant_id):
        return WireResponse(system_assistant(door.started_at))
    return WireResponse(assistant_view(await _stored(assistant_id, door)))


@router.patch(
    "/assistants/{assistant_id}", response_model=Assistant, responses=errors(400, 404, 409)
)
async def patch_assistant(
    assistant_id: str, body: AssistantPatch, door: DoorDep, duck: DuckDep
) -> WireResponse:
    """A new version: the fields given replace the current ones, metadata is merged."""
    _check_graph(body.graph_id)
    current = (await _stored(assistant_id, door)).current
    config, context = await checked_configuration(*_configuration(body, current), duck.settings)
    change: dict[str, Any] = {
        "config": config,
        "context": context,
        "metadata": {**current.metadata, **(body.metadata or {})},
    }
    if body.name is not None:
        change["name"] = body.name
    if body.description is not None:
        change["description"] = body.description
    row = await door.assistants.add_version(current.assistant_id, change)
    if row is None:  # deleted meanwhile
        raise HTTPException(404, NOT_FOUND.format(assistant_id=assistant_id))
    return WireResponse(assistant_view(row))


@router.delete("/assistants/{assistant_id}", status_code=204, responses=errors(404, 409))
async def delete_assistant(
    assistant_id: str, door: DoorDep, duck: DuckDep, hub: HubDep, delete_threads: bool = False
) -> Response:
    """Delete the assistant and its versions; `delete_threads=true` also its idle threads."""
    row = await _stored(assistant_id, door)
    if delete_threads:
        await delete_assistant_threads(row.current.assistant_id, duck=duck, door=door, hub=hub)
    await door.assistants.delete(row.current.assistant_id)
    return Response(status_code=204)


@router.post(
    "/assistants/{assistant_id}/versions",
    response_model=list[AssistantVersionView],
    responses=errors(404),
)
async def assistant_versions(
    assistant_id: str, body: AssistantVersions, door: DoorDep
) -> WireResponse:
    """The assistant's versions, newest first, filtered by metadata and paged."""
    if is_assistant(assistant_id):
        versions = [system_version(door.started_at)]
    else:
        row = await _stored(assistant_id, door)
        versions = [
            version_view(v) for v in await door.assistants.versions(row.current.assistant_id)
        ]
    versions = [v for v in versions if contains(v["metadata"], body.metadata or {})]
    return WireResponse(versions[body.offset : body.offset + body.limit])


@router.post(
    "/assistants/{assistant_id}/latest", response_model=Assistant, responses=errors(404, 409)
)
async def set_latest_version(
    assistant_id: str, body: AssistantLatest, door: DoorDep
) -> WireResponse:
    """Make an earlier (or later) version the assistant's current one."""
    if is_assistant(assistant_id) and body.version == 1:
        return WireResponse(system_assistant(door.started_at))
    row = await _stored(assistant_id, door)
    if not await door.assistants.set_latest(row.current.assistant_id, body.version):
        raise HTTPException(404, NO_VERSION.format(version=body.version, assistant_id=assistant_id))
    return WireResponse(assistant_view(await _stored(assistant_id, door)))


async def _matching(body: AssistantCount, door: Door) -> list[dict[str, Any]]:
    _check_graph(body.graph_id)
    stored = [assistant_view(row) for row in await door.assistants.all()]
    return [
        found
        for found in [system_assistant(door.started_at), *stored]
        if (body.name is None or body.name.lower() in found["name"].lower())
        and contains(found["metadata"], body.metadata or {})
    ]


async def _stored(assistant_id: str, door: Door) -> AssistantRow:
    """A stored assistant; `409` for the graph's own one, `404` for no assistant."""
    if is_assistant(assistant_id):
        raise HTTPException(409, READ_ONLY.format(assistant_id=ASSISTANT_ID))
    try:
        key = str(uuid.UUID(assistant_id))
    except ValueError:
        raise HTTPException(404, NOT_FOUND.format(assistant_id=assistant_id)) from None
    row = await door.assistants.get(key)
    if row is None:
        raise HTTPException(404, NOT_FOUND.format(assistant_id=assistant_id))
    return row


def _check_graph(graph_id: str | None) -> None:
    # agent-chat-ui names the graph `agent` by default: another name of the one graph.
    if graph_id is not None and graph_id not in ALIASES:
        raise HTTPException(404, NO_GRAPH.format(graph_id=graph_id))


def _configuration(
    body: AssistantPatch, current: AssistantVersion
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The patch's `(config, context)`: each replaces the current one when given."""
    config = body.config
    if config is None:
        config = {k: v for k, v in current.config.items() if k != "configurable"}
    context = body.context
    if context is None and not config.get("configurable"):
        context = current.context
    return config, context


__all__ = ["ALIASES", "ASSISTANT_ID", "FLAGS", "GRAPH_ID", "is_assistant", "router"]
