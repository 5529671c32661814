"""Memories: list, add, search, delete."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Response, status

from ducklm.kit.workspaces import resolve_workspace
from ducklm.memory import MemoryStore
from ducklm.memory.records import MemoryRecord, Scope
from ducklm.runtime.facade import DuckLM
from ducklm.server.deps import Duck
from ducklm.server.responses import MemoryHitView, MemorySearchView, errors
from ducklm.server.schemas import MAX_ID_LENGTH, MAX_PATH_LENGTH, Id, NewMemoryBody

router = APIRouter(prefix="/memory", tags=["memory"], responses=errors(503))


@router.get("")
async def list_memories(
    duck: Duck,
    scope: Scope | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[MemoryRecord]:
    """Memories in force, newest change first."""
    return await _store(duck).list(scope=scope, limit=limit)


@router.post("", status_code=status.HTTP_201_CREATED)
async def add_memory(body: NewMemoryBody, duck: Duck) -> MemoryRecord:
    """Store a memory as it is (the memory policy's rules are for what the model proposes)."""
    workspace = await resolve_workspace(duck.settings, body.workspace)
    try:
        return await _store(duck).add(
            body.text,
            scope=body.scope,
            workspace=str(workspace),
            conversation_id=body.conversation_id,
            memory_type=body.memory_type,
            importance=body.importance,
        )
    except ValueError as exc:  # messages written for people (see ducklm/memory/intake.py)
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None


@router.get("/search")
async def search_memories(
    duck: Duck,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    workspace: Annotated[str | None, Query(max_length=MAX_PATH_LENGTH)] = None,
    conversation_id: Annotated[str | None, Query(max_length=MAX_ID_LENGTH)] = None,
    k: Annotated[int, Query(ge=1, le=50)] = 5,
) -> MemorySearchView:
    """Hybrid search over what a workspace (an allowed one) and conversation see."""
    result = await _store(duck).search(
        q,
        workspace=str(await resolve_workspace(duck.settings, workspace)),
        conversation_id=conversation_id,
        k=k,
    )
    hits = [
        MemoryHitView(
            **asdict(h.record),
            score=h.score,
            vector_score=h.vector_score,
            keyword_score=h.keyword_score,
        )
        for h in result.hits
    ]
    return MemorySearchView(hits=hits, degraded=result.degraded, warning=result.warning)


@router.delete("/{memory_id}", status_code=status.HTTP_204_NO_CONTENT, responses=errors(404))
async def delete_memory(memory_id: Id, duck: Duck) -> Response:
    """Forget a memory."""
    if not await _store(duck).delete(memory_id):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no memory with id {memory_id!r}")
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _store(duck: DuckLM) -> MemoryStore:
    if duck.context.memory is None:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, "no memory store is open")
    return duck.context.memory
