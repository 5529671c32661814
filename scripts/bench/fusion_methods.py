"""The fusion methods the memory benchmark compares, over the same candidate pool.

Each question's pool is what `MemoryStore.search` sees: the cosine top-30 from Qdrant,
the BM25 top-30, and exact BM25 scores for every candidate of either side. A method
turns a pool into a ranking; recall@5 is computed on that ranking. Pure Python, so
every method is measured on exactly the same candidates, in one run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ducklm.memory import fusion


@dataclass(frozen=True)
class Pool:
    """One question's candidates, as the store's search gathers them."""

    query: str
    vector: dict[str, float]
    """Cosine of the vector top-N, best first."""
    keyword: dict[str, float]
    """Raw BM25 of every candidate (0.0 for a vector candidate sharing no word)."""
    keyword_top: list[str]
    """The BM25 top-N, best first."""
    query_weight: float
    replies: Mapping[str, str] = field(default_factory=dict)
    """For episodes: a turn that asks something -> the turn after it."""


Method = Callable[[Pool], list[str]]


def by_score(scores: Mapping[str, float]) -> list[str]:
    return sorted(scores, key=lambda d: (-scores[d], d))


def cosine(pool: Pool) -> list[str]:
    return list(pool.vector)


def bm25(pool: Pool) -> list[str]:
    return list(pool.keyword_top)


def convex(weight: float) -> Method:
    """DuckLM's fusion before issue 28: cosine and BM25 coverage, fixed weight."""

    def rank(pool: Pool) -> list[str]:
        fused = fusion.convex(pool.vector, pool.keyword, pool.query_weight, weight=weight)
        return [f.id for f in fused]

    return rank


def normalised(norm: Callable[[dict[str, float]], dict[str, float]], weight: float) -> Method:
    """Per-query normalisation of both sides over the pool, then a weighted sum."""

    def rank(pool: Pool) -> list[str]:
        floor = min(pool.vector.values(), default=0.0)
        ids = pool.vector.keys() | pool.keyword.keys()
        dense = norm({d: pool.vector.get(d, floor) for d in ids})
        sparse = norm({d: pool.keyword.get(d, 0.0) for d in ids})
        return by_score({d: weight * dense[d] + (1 - weight) * sparse[d] for d in ids})

    return rank


def rrf(k: int = fusion.RRF_K, weight: float = 0.5) -> Method:
    """Reciprocal rank fusion of the two top-N lists (weight 0.5: the usual, equal)."""

    def rank(pool: Pool) -> list[str]:
        fused = fusion.rrf(list(pool.vector), pool.keyword_top, k=k, weight=weight)
        return [f.id for f in fused]

    return rank


def adaptive(pool: Pool) -> list[str]:
    """RRF whose cosine share falls when the query names things (capitals, digits)."""
    weight = fusion.query_vector_weight(pool.query)
    return [f.id for f in fusion.rrf(list(pool.vector), pool.keyword_top, weight=weight)]


def with_replies(inner: Method) -> Method:
    """`inner`'s ranking, each turn that asks something followed by the turn answering it."""

    def rank(pool: Pool) -> list[str]:
        return fusion.follow_replies(inner(pool), pool.replies)

    return rank


def methods() -> dict[str, Method]:
    """Every method measured, by the name the tables show."""
    found: dict[str, Method] = {
        "cosine": cosine,
        "BM25": bm25,
        "convex w=0.8 (before)": convex(0.8),
        "convex w=0.5": convex(0.5),
    }
    for w in (0.3, 0.5, 0.7):
        found[f"min-max w={w}"] = normalised(fusion.min_max, w)
        found[f"z-score w={w}"] = normalised(fusion.z_score, w)
    found["RRF k=60"] = rrf()
    found["RRF k=20"] = rrf(20)
    found["RRF adaptive"] = adaptive
    for name in ("RRF k=60", "z-score w=0.5", "RRF adaptive"):
        found[f"{name} +replies"] = with_replies(found[name])
    return found
