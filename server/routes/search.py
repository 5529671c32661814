"""`GET /v1/search?q=`: conversations by title and by what was said in them."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel

from ducklm.runtime.conversation_search import HitKind
from ducklm.server.deps import Duck

router = APIRouter(tags=["conversations"])


class SearchHitView(BaseModel):
    """One place the query was found; a message hit opens the conversation at it."""

    conversation_id: str
    title: str
    kind: HitKind
    """`title` (the conversation's title holds the query) or `message` (something said)."""
    snippet: str
    score: float
    message_id: str | None = None
    """The message's id (`id` of its checkpointed message)."""
    speaker: str | None = None
    """`user` or `assistant`."""
    said_at: float | None = None


class SearchView(BaseModel):
    """Search results, best first."""

    query: str
    hits: list[SearchHitView]
    warning: str | None = None
    """Set when the message search fell back to keywords (the embeddings failed)."""


@router.get("/search")
async def search(
    duck: Duck,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    k: Annotated[int, Query(ge=1, le=100)] = 20,
) -> SearchView:
    """Conversations whose title holds `q`, then the messages said that match it best."""
    found = await duck.search(q, k=k)
    hits = [SearchHitView(**asdict(h)) for h in found.hits]
    return SearchView(query=q, hits=hits, warning=found.warning)
