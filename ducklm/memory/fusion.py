"""Hybrid ranking: a convex combination of cosine and query-normalised BM25.

Why not reciprocal rank fusion: RRF throws the scores away, so a weak keyword match at
rank 1 counts as much as a strong one, and a paraphrase (which shares no rare word with
its memory) loses to any memory that happens to share one. Bruch, Gai and Ingber (2023,
"An Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS) find a convex
combination of normalised scores beats RRF in and out of domain, and that its single
weight is learned from few examples; `scripts/bench/memory_recall.py` prints both.

The normalisation is per query and absolute, never min-max over the candidates (which
turns the best of a poor lot into a 1.0):

- cosine stays as it is (clipped at 0): MiniLM's scale is the same for every query;
- BM25 is divided by what a memory holding every query word once would score
  (`BM25Index.query_weight`), which makes it the idf-weighted share of the query that
  the memory covers: 1.0 for all of it, little for one common word of several.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

VECTOR_WEIGHT = 0.8
"""Weight of the cosine; BM25 gets the rest.

On the benchmark's paraphrases recall@5 is flat from 0.7 to 0.9 (within two questions of
117, on both halves of the set), and its keyword lookups stay at 1.0 up to 0.9 but drop
with cosine alone; 0.8 is the middle of that plateau. Tuned on that one set, so kept
where a small change of the data cannot tip it over an edge.
"""

EPISODE_WEIGHT = VECTOR_WEIGHT
"""Weight of the cosine for episodes (messages as they were said): the facts' weight.

On the tuning half of the generated dialogues (`scripts/bench/dialogue_recall.py`)
recall@5 is flat from 0.5 to 0.8 (0.82 to two decimals; the best, 0.75, led 0.8 by
2.45 questions' worth of 368, under 1%) and falls above 0.8; the held-out half agrees.
On the fact set the plateau is 0.7 to 0.9. 0.8 lies on both, and a lead of two
questions is not worth a second weight, so one fusion serves both kinds of memory;
RRF lost on both sets (0.62 against 0.81 on the held-out dialogues).
"""


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
    query_weight: float,
    *,
    weight: float = VECTOR_WEIGHT,
) -> list[Fused]:
    """Rank the union of both candidate sets, best first.

    Args:
        vector: Cosine per candidate from the vector search (its top-N).
        keyword: Raw BM25 per candidate, for every candidate of either side (exact: a
            vector candidate that shares no word with the query has 0.0).
        query_weight: `BM25Index.query_weight(query)`, the BM25 normaliser.
        weight: The cosine's share, 0..1.
    """
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
