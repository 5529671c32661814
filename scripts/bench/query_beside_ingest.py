"""A query's encode while a large background encode runs, against the query alone.

The in-process MiniLM runs on one thread (`ducklm/memory/model_thread.py`). A turn's
query encode (recall, skill selection: on the way to the first token) submitted while
an ingest or reindex is encoding thousands of texts would, in first-come order, wait
for all of them. Background work goes as small jobs behind queries, so the query waits
for one job at most. Baselines, in the same run: the query's encode with the thread
idle, and in first-come order (submitted as background work itself, as every encode
was before queries went first); each round encodes a new text (no cache).

    .venv/bin/python scripts/bench/query_beside_ingest.py
"""

from __future__ import annotations

import asyncio
import os
import time

from _common import header, median_ms, p90_ms, table, verdict

from ducklm.memory.embeddings import LocalEmbedder

ROUNDS = 8
INGEST_TEXTS = 200
MAX_RATIO = 3.0
"""A query beside an ingest may wait for one small job; 3x the idle encode at most."""
MODEL = "all-MiniLM-L6-v2"


async def timed(embedder: LocalEmbedder, text: str) -> float:
    start = time.perf_counter()
    await embedder.embed([text])
    return time.perf_counter() - start


async def bench() -> None:
    embedder = LocalEmbedder(MODEL)
    await embedder.embed(["warm up the model"])
    filler = [
        f"memory {i}: the pond had {i % 7} ducks and a heron on day {i}"
        for i in range(INGEST_TEXTS)
    ]
    alone, beside, in_line, ingest_s = [], [], [], []
    for n in range(ROUNDS):
        alone.append(await timed(embedder, f"where did duck {n} swim on monday?"))
        began = time.perf_counter()
        ingest = asyncio.create_task(embedder.embed(filler, background=True))
        await asyncio.sleep(0.05)  # the ingest is running
        beside.append(await timed(embedder, f"where did duck {n} swim on tuesday?"))
        await ingest
        ingest_s.append(time.perf_counter() - began)
        ingest = asyncio.create_task(embedder.embed(filler, background=True))
        await asyncio.sleep(0.05)
        start = time.perf_counter()
        await embedder.embed([f"where did duck {n} swim on friday?"], background=True)
        in_line.append(time.perf_counter() - start)
        await ingest
    table(
        ["query encode", "p50 ms", "p90 ms"],
        [
            ("thread idle (baseline)", median_ms(alone), p90_ms(alone)),
            (f"beside a {INGEST_TEXTS}-text background ingest", median_ms(beside), p90_ms(beside)),
            ("in first-come order (the old way) beside it", median_ms(in_line), p90_ms(in_line)),
            ("the ingest itself", median_ms(ingest_s), p90_ms(ingest_s)),
        ],
    )
    ratio = median_ms(beside) / median_ms(alone)
    print(
        f"INFO  first-come order / query alone, p50: {median_ms(in_line) / median_ms(alone):.1f}x"
    )
    verdict("query beside an ingest / query alone, p50", ratio, MAX_RATIO, "x")


def main() -> None:
    header(
        "a query's encode beside a background ingest, in-process MiniLM",
        f"{ROUNDS} rounds, {INGEST_TEXTS} texts an ingest",
        f"{os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.2f}",
    )
    asyncio.run(bench())
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
