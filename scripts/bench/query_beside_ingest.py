"""A query's encode while a large background encode runs, against the query alone.

The in-process MiniLM runs on two threads (`ducklm/memory/model_thread.py`): one for
queries (recall, skill selection: on the way to the first token), one for background
work (an ingest, a reindex, episode writes), so a query never waits for a background
job, only shares the cores with it. Baselines, in the same run: the query's encode with
both threads idle, and in first-come order (submitted as background work itself, as
every encode was before queries had a lane); each round encodes a new text (no cache).

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
MAX_RATIO = 1.5
"""A query beside an ingest shares the cores, never waits: 1.5x the idle encode at most
(issue 28's target for a search beside an ingest)."""
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
