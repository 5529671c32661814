"""Memories: list, add, search, delete."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Response, status

from ducklm.memory import MemoryStore
from ducklm.memory.records import Scope
from ducklm.runtime import DuckLM
from ducklm.server.deps import Duck
from ducklm.server.schemas import NewMemoryBody

router = APIRouter(prefix="/memory", tags=["memory"])


@router.get("")
async def list_memories(
    duck: Duck,
    scope: Scope | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[dict[str, Any]]:
    """Memories in force, newest change first."""
    return [asdict(r) for r in await _store(duck).list(scope=scope, limit=limit)]


@router.post("", status_code=status.HTTP_201_CREATED)
async def add_memory(body: NewMemoryBody, duck: Duck) -> dict[str, Any]:
    """Store a memory as it is (the memory policy's rules are for what the model proposes)."""
    try:
        record = await _store(duck).add(
            body.text,
            scope=body.scope,
            workspace=body.workspace or str(duck.settings.workspace),
            conversation_id=body.conversation_id,
            memory_type=body.memory_type,
            importance=body.importance,
        )
    except ValueError as exc:  # messages written for people (see memory/intake.py)
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None
    return asdict(record)


@router.get("/search")
async def search_memories(
    duck: Duck,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    workspace: str | None = None,
    conversation_id: str | None = None,
    k: Annotated[int, Query(ge=1, le=50)] = 5,
) -> dict[str, Any]:
    """Hybrid search over what a workspace and conversation see."""
    result = await _store(duck).search(
        q,
        workspace=workspace or str(duck.settings.workspace),
        conversation_id=conversation_id,
        k=k,
    )
    hits = [
        {
            **asdict(h.record),
            "score": h.score,
            "vector_score": h.vector_score,
            "keyword_score": h.keyword_score,
        }
        for h in result.hits
    ]
    return {
        "hits": hits,
        "degraded": result.degraded,
        "warning": result.warning,
    }


@router.delete("/{memory_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_memory(memory_id: str, duck: Duck) -> Response:
    """Forget a memory."""
    if not await _store(duck).delete(memory_id):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no memory with id {memory_id!r}")
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _store(duck: DuckLM) -> MemoryStore:
    if duck.context.memory is None:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, "no memory store is open")
    return duck.context.memory
