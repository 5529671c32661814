"""Okapi BM25 over the memories, in memory, updated as memories come and go."""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable

from ducklm.memory.tokens import tokenize

# The usual constants. Memories are one sentence long, so length normalisation (b)
# matters little and term saturation (k1) caps a word repeated in a short text.
K1 = 1.2
B = 0.75


class BM25Index:
    """Postings per word, kept current by `add` and `remove`; searches score exactly.

    Not safe across threads: the store mutates and searches it on the event loop only
    (building a large one from scratch may happen on a worker thread before anyone sees it).
    """

    def __init__(self) -> None:
        self._postings: dict[str, dict[str, int]] = {}
        self._lengths: dict[str, int] = {}
        self._words: dict[str, tuple[str, ...]] = {}  # so `remove` touches only its postings
        self._total_length = 0

    @classmethod
    def build(cls, docs: Iterable[tuple[str, str]]) -> BM25Index:
        """An index of `(doc_id, text)` pairs (slow for many: call it on a worker thread)."""
        index = cls()
        for doc_id, text in docs:
            index.add(doc_id, text)
        return index

    def __len__(self) -> int:
        return len(self._lengths)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._lengths

    def add(self, doc_id: str, text: str) -> None:
        """Index `text` as `doc_id`, replacing what `doc_id` had."""
        self.add_tokens(doc_id, tokenize(text))

    def add_tokens(self, doc_id: str, tokens: list[str]) -> None:
        """Index already tokenized text (lets callers tokenize a batch off the event loop)."""
        self.remove(doc_id)
        counts = Counter(tokens)
        for word, count in counts.items():
            self._postings.setdefault(word, {})[doc_id] = count
        self._words[doc_id] = tuple(counts)
        self._lengths[doc_id] = len(tokens)
        self._total_length += len(tokens)

    def remove(self, doc_id: str) -> None:
        """Forget `doc_id`; nothing happens when it is not indexed."""
        length = self._lengths.pop(doc_id, None)
        if length is None:
            return
        self._total_length -= length
        for word in self._words.pop(doc_id):
            del self._postings[word][doc_id]
            if not self._postings[word]:
                del self._postings[word]

    def idf(self, word: str) -> float:
        """Lucene's BM25 idf: positive for every word, largest for unseen ones."""
        n = len(self._postings.get(word, ()))
        return math.log(1 + (len(self._lengths) - n + 0.5) / (n + 0.5))

    def query_weight(self, query: str) -> float:
        """What a text of average length holding each query word once would score.

        Dividing a score by this gives the idf-weighted share of the query a memory
        covers, a 0..1 scale (slightly above 1 for short texts) that fusion can use.
        """
        return sum(self.idf(w) for w in set(tokenize(query)))

    def search(
        self, query: str, accept: Callable[[str], bool], limit: int
    ) -> list[tuple[str, float]]:
        """The `limit` best `(doc_id, score)` among documents `accept` lets through."""
        scores = self._scores(set(tokenize(query)), None)
        found = (item for item in scores.items() if accept(item[0]))
        return heapq.nlargest(limit, found, key=lambda item: item[1])

    def score(self, query: str, doc_ids: Iterable[str]) -> dict[str, float]:
        """Exact scores of `doc_ids` (0.0 when they share no word with the query)."""
        wanted = set(doc_ids)
        scores = self._scores(set(tokenize(query)), wanted)
        return {d: scores.get(d, 0.0) for d in wanted}

    def _scores(self, words: set[str], only: set[str] | None) -> dict[str, float]:
        scores: dict[str, float] = {}
        average = self._total_length / len(self._lengths) if self._lengths else 1.0
        for word in words:
            postings = self._postings.get(word)
            if not postings:
                continue
            idf = self.idf(word)
            docs = postings.keys() & only if only is not None else postings.keys()
            for doc in docs:
                tf = postings[doc]
                norm = K1 * (1 - B + B * self._lengths[doc] / average)
                scores[doc] = scores.get(doc, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
        return scores
