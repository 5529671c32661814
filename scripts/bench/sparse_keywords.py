"""Keyword search in Qdrant sparse vectors (IDF modifier) against DuckLM's in-memory BM25.

Issue 15 asks to move the keyword side into Qdrant so that hybrid search is one
`query_points` call (dense and sparse prefetch, fused), the same in embedded mode and
on a server. This measures what that costs in embedded mode, at 10k memories (the
benchmark's template filler), before anything is built on it:

- DuckLM's `BM25Index.search` (the baseline, in the same run),
- Qdrant sparse `query_points` (BM25 term weights from DuckLM's tokenizer, `Modifier.IDF`),
- the same with the scope filter every DuckLM search needs (payload `must`),
- one hybrid `query_points`: dense + sparse prefetch, RRF fusion, with the filter.

Dense vectors are random (speed only). Build time is reported too.

    .venv/bin/python scripts/bench/sparse_keywords.py
"""

from __future__ import annotations

import os
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Callable

import numpy as np
from _common import header, median_ms, p90_ms, table
from memory_data import load_data
from qdrant_client import QdrantClient, models

from ducklm.memory.bm25 import K1, B, BM25Index
from ducklm.memory.tokens import tokenize

N = 10_000
QUERIES = 60
SPACE = 2**31 - 1


def term_id(word: str) -> int:
    return zlib.crc32(word.encode()) % SPACE


def doc_vector(words: list[str], average: float) -> models.SparseVector:
    counts = Counter(words)
    norm = K1 * (1 - B + B * len(words) / average)
    ids = [term_id(w) for w in counts]
    values = [c * (K1 + 1) / (c + norm) for c in counts.values()]
    return models.SparseVector(indices=ids, values=values)


def query_vector(text: str) -> models.SparseVector:
    words = sorted(set(tokenize(text)))
    return models.SparseVector(indices=[term_id(w) for w in words], values=[1.0] * len(words))


def timed(fn: Callable[[str], object], queries: list[str]) -> list[float]:
    for q in queries[:5]:
        fn(q)
    times = []
    for q in queries:
        start = time.perf_counter()
        fn(q)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    header(
        "Keyword search: Qdrant sparse vectors (embedded) vs DuckLM's in-memory BM25",
        f"{N} template memories, {QUERIES} questions of the fact set",
        f"{os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.2f}",
    )
    data = load_data()
    texts = [item.text for item in data.filler.make(N, seed=1)]
    queries = [q.text for q in data.questions[:QUERIES]]
    tokens = [tokenize(t) for t in texts]
    average = sum(map(len, tokens)) / len(tokens)
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((N, 384)).astype(np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)

    start = time.perf_counter()
    index = BM25Index.build((str(i), t) for i, t in enumerate(texts))
    bm25_build = time.perf_counter() - start

    with tempfile.TemporaryDirectory() as tmp:
        client = QdrantClient(path=tmp)
        client.create_collection(
            "m",
            vectors_config={"dense": models.VectorParams(size=384, distance=models.Distance.DOT)},
            sparse_vectors_config={"bm25": models.SparseVectorParams(modifier=models.Modifier.IDF)},
        )
        start = time.perf_counter()
        for at in range(0, N, 500):
            client.upsert("m", points=[
                models.PointStruct(id=i, payload={"workspace": "w" if i % 5 else "x"}, vector={
                    "dense": dense[i].tolist(), "bm25": doc_vector(tokens[i], average)})
                for i in range(at, min(at + 500, N))
            ])  # fmt: skip
        qdrant_build = time.perf_counter() - start
        scope = models.Filter(
            must=[models.FieldCondition(key="workspace", match=models.MatchValue(value="w"))]
        )

        def sparse(q: str, flt: models.Filter | None = None) -> object:
            return client.query_points(
                "m", query=query_vector(q), using="bm25", limit=30, query_filter=flt
            )

        def hybrid(q: str) -> object:
            return client.query_points(
                "m",
                prefetch=[
                    models.Prefetch(query=dense[0].tolist(), using="dense", limit=30),
                    models.Prefetch(query=query_vector(q), using="bm25", limit=30),
                ],
                query=models.FusionQuery(fusion=models.Fusion.RRF),
                query_filter=scope,
                limit=5,
            )

        rows = [
            ("DuckLM BM25Index.search (baseline)", bm25_build,
             timed(lambda q: index.search(q, lambda _: True, 30), queries)),
            ("Qdrant sparse, IDF modifier", qdrant_build, timed(sparse, queries)),
            ("Qdrant sparse + scope filter", qdrant_build,
             timed(lambda q: sparse(q, scope), queries)),
            ("Qdrant hybrid query_points (prefetch + RRF, filter)", qdrant_build,
             timed(hybrid, queries)),
        ]  # fmt: skip
        client.close()
    base = median_ms(rows[0][2])
    table(
        ["10k memories, embedded", "build s", "p50 ms", "p90 ms", "x baseline"],
        [[name, build, median_ms(t), p90_ms(t), median_ms(t) / base] for name, build, t in rows],
    )


if __name__ == "__main__":
    main()
