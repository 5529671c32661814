"""Hybrid ranking: cosine and BM25 candidates fused into one list, best first.

`fuse` (z-scores, equal weights) is what `MemoryStore.search` uses, and episodes follow
a turn that asks something with the turn after it (`follow_replies`). The other
functions are the alternatives `scripts/bench/memory_recall.py` measures beside it, on
three sets that disagree (facts, generated dialogues, short factual and long rambling exchanges):

- `convex`: a fixed-weight sum of cosine and BM25 coverage (shipped until issue 28; it
  won on generated dialogues and lost to BM25 alone on a public conversation benchmark);
- `min_max`, `z_score`: per-query normalisations of each side over the candidates;
- `rrf`: reciprocal rank fusion, which reads ranks only (so a weak match at rank 1 counts
  as much as a strong one);
- `query_vector_weight`: a cosine share that falls when the query names things;
- `follow_replies`: a turn that asks something followed by the turn after it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

VECTOR_WEIGHT = 0.5
"""Cosine share of `fuse`: equal. Our three sets favour cosine and the public
conversation benchmark favours BM25 (0.49 against 0.37); an equal share leans on
neither, and on the tuning halves it had the best worst-set ratio to the better part."""
EPISODE_WEIGHT = VECTOR_WEIGHT
"""The same for episodes: no set read better with a weight of their own."""
RELEVANCE_WEIGHT = 0.8
"""Cosine share of the absolute score a hit carries (`convex`): the scale on which the
recall node's floors were set. Hits are ordered by `fuse`, not by it."""
RRF_K = 60
"""The usual RRF constant (Cormack et al. 2009); k=20 read the same within a question."""
NAMING_WEIGHT = 0.35
"""`query_vector_weight` for a query that names something (a name, a number)."""

# A capitalised word after the first, or any digit: a name, a date, a code.
_NAMING = re.compile(r"(?<=\s)[A-Z][a-z]|\d")


@dataclass(frozen=True)
class Fused:
    """One candidate's fused score and its parts."""

    id: str
    score: float
    vector_score: float | None
    keyword_score: float | None


def fuse(
    vector: Mapping[str, float],
    keyword: Mapping[str, float],
    *,
    weight: float = VECTOR_WEIGHT,
) -> list[Fused]:
    """The store's fusion: z-scores of cosine and BM25 over the candidates, summed.

    Each side is measured in its own standard deviations over this query's candidates,
    so neither side's scale (BM25 grows with rare words, cosine does not) decides, and
    the strength of a match still counts (RRF reads ranks only: it lost on the
    generated dialogues, 0.61 against 0.80, as a weak keyword match at rank 1 counts as
    much as a strong one).

    Args:
        vector: Cosine per candidate from the vector search (its top-N).
        keyword: Raw BM25 per candidate of either side (0.0 when it shares no word).
        weight: The cosine's share, 0..1.
    """
    # A keyword-only candidate was not in the vector top-N, so its cosine is at most the
    # lowest one returned: use that bound rather than 0, which would punish it twice.
    floor = min(vector.values(), default=0.0)
    ids = vector.keys() | keyword.keys()
    dense = z_score({d: vector.get(d, floor) for d in ids})
    sparse = z_score({d: keyword.get(d, 0.0) for d in ids})
    fused = [
        Fused(d, weight * dense[d] + (1 - weight) * sparse[d], vector.get(d),
              keyword.get(d) or None)
        for d in ids
    ]  # fmt: skip
    fused.sort(key=lambda f: (-f.score, f.id))
    return fused


def rrf(
    vector: Sequence[str], keyword: Sequence[str], *, k: int = RRF_K, weight: float = 0.5
) -> list[Fused]:
    """Reciprocal rank fusion: `2 * (w / (k + rank) + (1 - w) / (k + rank))`, best first.

    Scaled by 2 so that equal weights give the textbook sum. A candidate missing from a
    list gets nothing from it.
    """
    scores: dict[str, float] = {}
    for ranking, share in ((vector, weight), (keyword, 1 - weight)):
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + 2 * share / (k + rank)
    ordered = sorted(scores, key=lambda d: (-scores[d], d))
    return [Fused(d, scores[d], None, None) for d in ordered]


def convex(
    vector: Mapping[str, float],
    keyword: Mapping[str, float],
    query_weight: float,
    *,
    weight: float = 0.8,
) -> list[Fused]:
    """Cosine and BM25 coverage (`bm25 / query_weight`, capped at 1), fixed weight."""
    # A keyword-only candidate was not in the vector top-N, so its cosine is at most the
    # lowest one returned: use that bound rather than 0, which would punish it twice.
    floor = min(vector.values(), default=0.0)
    fused = []
    for doc_id in vector.keys() | keyword.keys():
        cosine = vector.get(doc_id)
        bm25 = keyword.get(doc_id, 0.0)
        coverage = min(bm25 / query_weight, 1.0) if query_weight > 0 else 0.0
        dense = max(cosine if cosine is not None else floor, 0.0)
        score = weight * dense + (1 - weight) * coverage
        fused.append(Fused(doc_id, score, cosine, bm25 if bm25 > 0 else None))
    fused.sort(key=lambda f: (-f.score, f.id))
    return fused


def min_max(scores: Mapping[str, float]) -> dict[str, float]:
    """Each score mapped to 0..1 over these candidates (all 0.0 when they are equal)."""
    low, high = min(scores.values(), default=0.0), max(scores.values(), default=0.0)
    span = high - low
    return {d: (s - low) / span if span > 0 else 0.0 for d, s in scores.items()}


def z_score(scores: Mapping[str, float]) -> dict[str, float]:
    """Each score in standard deviations from these candidates' mean (0.0 if no spread)."""
    if not scores:
        return {}
    mean = sum(scores.values()) / len(scores)
    spread = math.sqrt(sum((s - mean) ** 2 for s in scores.values()) / len(scores))
    return {d: (s - mean) / spread if spread > 0 else 0.0 for d, s in scores.items()}


def query_vector_weight(query: str) -> float:
    """The cosine share for `query`: lower when it names things, which keywords find."""
    return NAMING_WEIGHT if _NAMING.search(query) else VECTOR_WEIGHT


def follow_replies(ranked: Sequence[str], replies: Mapping[str, str]) -> list[str]:
    """`ranked`, each id that has a reply (`replies[id]`) followed by it, no repeats."""
    out: dict[str, None] = {}
    for doc in ranked:
        out[doc] = None
        if (reply := replies.get(doc)) is not None:
            out[reply] = None
    return list(out)
