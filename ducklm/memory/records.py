"""What a memory is: the record kept in SQLite, a new one to store, and search hits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

Scope = Literal["global", "workspace", "conversation"]
"""Who sees a memory: everyone, one workspace, or one conversation."""

SCOPES: tuple[Scope, ...] = get_args(Scope)


class MemoryNotFound(KeyError):
    """No memory has this id."""


@dataclass(frozen=True)
class MemoryRecord:
    """One stored memory; the `memories` table in SQLite is the source of truth."""

    id: str
    """A uuid4 string; also the point id in Qdrant."""
    text: str
    """The memory itself, one short statement."""
    scope: Scope
    """`global` (about the person), `workspace` (about a project) or `conversation`."""
    workspace: str | None
    """The workspace a `workspace` memory belongs to (kept for the others as provenance)."""
    conversation_id: str | None
    """The conversation (thread) a `conversation` memory belongs to, or provenance."""
    memory_type: str
    """Free-form kind chosen by the memory policy: `fact`, `preference`, `event`, ..."""
    importance: float
    """0..1, how much the memory policy thinks it matters."""
    created_at: float
    """Unix time of the first store."""
    updated_at: float
    """Unix time of the last change (text, importance or supersession)."""
    superseded_by: str | None
    """Id of the memory that replaced this one; superseded memories are never recalled."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Anything else the caller wants kept with it (stored as JSON)."""


@dataclass(frozen=True)
class NewMemory:
    """A memory to store with `MemoryStore.add_many`; the fields mirror `MemoryStore.add`."""

    text: str
    scope: Scope | None = None
    """`None` lets `infer_scope` decide from the text."""
    workspace: str | None = None
    conversation_id: str | None = None
    memory_type: str = "fact"
    importance: float = 0.5
    metadata: dict[str, Any] | None = None
    id: str | None = None
    """A chosen id (an episode's comes from its message); `None` makes a new uuid4."""
    said_at: float | None = None
    """When it was said, as a Unix time; `None` means now."""


@dataclass(frozen=True)
class MemoryHit:
    """A search result: the record, the fused score and what each retriever gave it."""

    record: MemoryRecord
    score: float
    """How well the record matches, 0..1 (cosine and BM25 coverage, `fusion.convex`);
    hits are ordered by the fusion (`fusion.fuse`), which this roughly follows."""
    vector_score: float | None
    """Cosine similarity to the query; `None` when the vector search did not return it."""
    keyword_score: float | None
    """Raw BM25 score; `None` when no query word occurs in the memory."""


@dataclass(frozen=True)
class SearchResult:
    """Hits, best first, and whether the vector side was missing or incomplete."""

    hits: list[MemoryHit]
    degraded: bool = False
    """True when the results come from keyword search alone or from an incomplete index."""
    warning: str | None = None
    """Why, in words for a person (the caller turns it into a warning event)."""
