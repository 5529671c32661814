"""Long-term memory: records in SQLite, vectors in Qdrant, hybrid (vector + BM25) search.

Open it with `open_memory(settings, db)`; see `MemoryStore` for what it offers. The
episodes (every message as it was said, `ducklm.memory.episodes`) are a second store
beside it: `open_episodes(settings, db, facts)`.
"""

from ducklm.memory.embeddings import EmbeddingError
from ducklm.memory.opening import open_episodes, open_memory
from ducklm.memory.records import (
    MemoryHit,
    MemoryNotFound,
    MemoryRecord,
    NewMemory,
    Scope,
    SearchResult,
)
from ducklm.memory.scope import infer_scope
from ducklm.memory.store import MemoryStore
from ducklm.memory.vectors import VectorsUnavailable

__all__ = [
    "EmbeddingError",
    "MemoryHit",
    "MemoryNotFound",
    "MemoryRecord",
    "MemoryStore",
    "NewMemory",
    "Scope",
    "SearchResult",
    "VectorsUnavailable",
    "infer_scope",
    "open_episodes",
    "open_memory",
]
