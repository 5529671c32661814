"""Memory recall on three sets that disagree, every fusion method, and speed, in one run.

Sets (`recall_sets.py`), each with a tuning half and a held-out half:

- `facts` / `fact lookups` (`data/memory_facts.json`, written for this benchmark): 205
  facts about one person, 117 questions in other words, 18 keyword lookups, among 10k
  synthetic filler memories (40% of them other people's, never to be returned);
- `dialogues` (`dialogue_data.py`): generated multi-session conversations;
- `exchanges` (`exchange_data.py`): short factual exchanges with names and dates (the
  answer often one turn after the question naming it) and long rambling turns whose
  evidence is paraphrased.

Every method (`fusion_methods.py`) ranks the same candidate pool the store's search
sees; "hybrid (search)" is the store's own `search`. The method is chosen on the
tuning halves of all sets together: the best worst-set ratio to the better of cosine
and BM25 on that set.

Time-aware questions (`dated_questions.py`, `memory_dated.py`) on the dialogues and
the exchanges, both halves: "when did ..." and "what did X say last week", recall@5 of
the evidence turn and whether the date of the top hit shown to the model is right,
plain hybrid search against DuckLM's reading of dates.

Speed, every block with the load beside it: ingest A/B (the encoder's own batch
throughput, the sequential write path, the pipelined one, interleaved ABBA in one run),
the 10k ingest, search p50 at 10k (query embedding included), a search beside a
running ingest against one alone, and search at 100k.

    .venv/bin/python scripts/bench/memory_recall.py [--only speed|recall|dates] [--rerank]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import tempfile
import time
import warnings
from pathlib import Path

from _common import at_least, duck_settings, header, median_ms, p90_ms, table, verdict
from fusion_methods import methods
from memory_data import DATA, Data, load_data
from memory_dated import report_timed
from memory_rerank import report_rerank
from memory_speed import (
    AB_SIZE,
    BESIDE,
    ENCODER,
    FILLER,
    IDLE,
    PIPELINED,
    SEQUENTIAL,
    SERVER_NOTE,
    Others,
    beside_ingest,
    big_world,
    cached_search_times,
    ingest_ab,
    search_times,
)
from recall_sets import Asked, dialogue_sets, fact_sets, recall_at_k

from ducklm.memory import MemoryStore, open_episodes, open_memory
from ducklm.memory.embeddings import _encode
from ducklm.stores import open_database

HYBRID = "hybrid (search)"
PARTS = ("cosine", "BM25")
TARGET_GAIN = 1.15
TARGET_P50_MS = 15.0
TARGET_INGEST = 300.0
TARGET_BESIDE = 1.5
PASSES = 3
PARTS_TO_RUN = ("speed", "recall")
ONLY = (*PARTS_TO_RUN, "dates")
"""`dates`: the dialogue sets alone, their fusion tables and their time-aware questions
(a part of `recall`, minutes shorter: no facts, no 10k filler)."""

Scores = dict[tuple[str, str, str], float]
"""Mean recall@5 by (set, split, method)."""


def score_all(asked: list[Asked]) -> Scores:
    """recall@5 of every method (and the store's hybrid) on every set and split."""
    ranked = methods()
    sums: dict[tuple[str, str, str], list[float]] = {}
    for a in asked:
        sums.setdefault((a.set, a.split, HYBRID), []).append(recall_at_k(a.hybrid, a.evidence))
        for name, method in ranked.items():
            value = recall_at_k(method(a.pool), a.evidence)
            sums.setdefault((a.set, a.split, name), []).append(value)
    return {key: sum(v) / len(v) for key, v in sums.items()}


def worst_ratio(scores: Scores, sets: list[str], split: str, method: str) -> float:
    """The method's lowest ratio, over the sets, to the better of cosine and BM25."""
    return min(scores[s, split, method] / max(scores[s, split, p] for p in PARTS) for s in sets)


def choose(scores: Scores, sets: list[str]) -> str:
    """The fused method with the best worst-set ratio on the tuning halves (then mean)."""
    fused = [m for m in methods() if m not in PARTS]
    return max(
        fused,
        key=lambda m: (
            round(worst_ratio(scores, sets, "tune", m), 3),
            sum(scores[s, "tune", m] for s in sets),
        ),
    )


def report_recall(scores: Scores, sets: list[str], counts: dict[tuple[str, str], int]) -> str:
    chosen = choose(scores, sets)
    columns = ["method"] + [f"{s} {sp} ({counts[s, sp]})" for s in sets for sp in ("tune", "held")]
    rows = [
        [m] + [scores[s, sp, m] for s in sets for sp in ("tune", "held")]
        + [worst_ratio(scores, sets, "tune", m), worst_ratio(scores, sets, "held", m)]
        for m in [HYBRID, *methods()]
    ]  # fmt: skip
    print("recall@5 by set and split; last two columns: worst-set ratio to max(cosine, BM25)")
    table([*columns, "worst tune", "worst held"], rows)
    print(f"chosen on the tuning halves: {chosen}; the store's search is '{HYBRID}'")
    print("held-out halves, the store's hybrid against its parts:")
    table(
        ["set", "hybrid", "cosine", "BM25", "hybrid / BM25", "hybrid / cosine"],
        [[s, scores[s, "held", HYBRID], scores[s, "held", "cosine"], scores[s, "held", "BM25"],
          scores[s, "held", HYBRID] / scores[s, "held", "BM25"],
          scores[s, "held", HYBRID] / scores[s, "held", "cosine"]] for s in sets],
    )  # fmt: skip
    return chosen


async def bench(root: Path, parts: set[str], *, rerank: bool) -> None:
    """The parts asked for (`speed`, `recall`) on one store; the 10k filler serves both."""
    settings = duck_settings("http://127.0.0.1:9/v1", root)
    await asyncio.to_thread(settings.data_dir.mkdir, parents=True)
    data = await asyncio.to_thread(load_data)
    items = data.filler.make(FILLER, seed=1)
    async with open_database(settings.files.database) as db, open_memory(settings, db) as store:
        if parts == {"dates"}:  # the generated dialogues alone: no facts, no filler
            asked, timed = await dialogue_sets(await open_episodes(settings, db, store))
            report_sets(asked)
            report_timed(timed)
            return
        stored = await store.add_many(data.facts)  # also loads the model, outside the timing
        if "speed" in parts:
            encode = functools.partial(_encode, settings.embeddings_model)
            with Others() as during_ab:
                rates = await ingest_ab(store, data, encode)
            report_ingest(rates, during_ab)
        with Others() as during_ingest:
            start = time.perf_counter()
            filler = await store.add_many(items)
            rate = len(items) / (time.perf_counter() - start)
        if "speed" in parts:
            await report_search(store, data, rate, during_ingest)
        if "recall" in parts:
            asked = await fact_sets(store, data, stored, filler, items)
            episodes = await open_episodes(settings, db, store)
            more, timed = await dialogue_sets(episodes)
    if "recall" in parts:
        report_sets(asked + more)
        report_timed(timed)
        if rerank:
            await asyncio.to_thread(report_rerank, asked + more)
    if "speed" in parts:
        big = await big_world(settings, data, rate)
        table(
            ["100k memories, embedded", "ingest / s", "open s", "p50 ms", "p90 ms", "max RSS MB",
             "during ingest / search"],
            [big],
        )  # fmt: skip
        print(SERVER_NOTE)


def report_ingest(rates: dict[str, list[float]], during: Others) -> None:
    """The ingest A/B: each variant's rounds, and its share of the encoder's own rate."""
    rounds = len(rates[ENCODER])
    print(f"ingest A/B, {rounds} interleaved rounds of {AB_SIZE} memories ({during}):")
    encoder = sum(rates[ENCODER])
    table(
        ["variant", "memories / s (rounds)", "share of the encoder's", "/ sequential"],
        [[k, " / ".join(f"{r:.0f}" for r in v), sum(v) / encoder,
          sum(v) / sum(rates[SEQUENTIAL])] for k, v in rates.items()],
    )  # fmt: skip
    at_least("ingest, share of the encoder's throughput", sum(rates[PIPELINED]) / encoder, 0.8)


async def report_search(store: MemoryStore, data: Data, rate: float, ingest: Others) -> None:
    """Search p50 at 10k, and a search beside a running ingest against one alone."""
    with Others() as during_search:
        times = await search_times(store, data.questions, PASSES)
    with Others() as during_cached:
        cached = await cached_search_times(store, data.questions)
    table(
        ["10k memories, embedded", "p50 ms", "p90 ms", "ingest / s", "during ingest / search"],
        [["search (query embedding included)", median_ms(times), p90_ms(times), rate,
          f"{ingest} / {during_search}"],
         ["search, query vector cached (the store's part)", median_ms(cached), p90_ms(cached),
          rate, f"{ingest} / {during_cached}"]],
    )  # fmt: skip
    with Others() as during_beside:
        beside = await beside_ingest(store, data)
    print(f"a search beside a running add_many, {len(beside[IDLE])} rounds ({during_beside}):")
    table(["search", "p50 ms", "p90 ms"], [[k, median_ms(v), p90_ms(v)] for k, v in beside.items()])
    verdict("search p50 at 10k", median_ms(times), TARGET_P50_MS, " ms")
    # The query's own encode is ~18 ms on this 2-core machine (MiniLM, traced): the
    # store's part is what DuckLM's code decides (issue 28's proposed reading).
    verdict("search p50 at 10k, the store's part", median_ms(cached), TARGET_P50_MS, " ms")
    at_least("ingest rate", rate, TARGET_INGEST, "/s")
    ratio = median_ms(beside[BESIDE]) / median_ms(beside[IDLE])
    verdict("search beside an ingest / search alone, p50", ratio, TARGET_BESIDE, "x")


def report_sets(asked: list[Asked]) -> None:
    """The fusion tables and the held-out targets, every set and split."""
    scores = score_all(asked)
    sets = list(dict.fromkeys(a.set for a in asked))
    counts: dict[tuple[str, str], int] = {}
    for a in asked:
        counts[a.set, a.split] = counts.get((a.set, a.split), 0) + 1
    report_recall(scores, sets, counts)
    for s in sets:
        held = scores[s, "held", HYBRID]
        at_least(f"{s} held-out hybrid / BM25", held / scores[s, "held", "BM25"], TARGET_GAIN, "x")
        at_least(f"{s} held-out hybrid / cosine", held / scores[s, "held", "cosine"], 1.0, "x")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--only",
        choices=ONLY,
        help="run one part: speed (a few minutes), recall, or dates (recall's dialogues alone)",
    )
    parser.add_argument(
        "--rerank", action="store_true", help="also measure mpnet as a reranker (memory_rerank.py)"
    )
    args = parser.parse_args()
    parts = {args.only} if args.only else set(PARTS_TO_RUN)
    header(
        "Memory recall and speed",
        f"parts: {', '.join(sorted(parts))}",
        f"{DATA.name} + 10k filler; dialogue_data.py; exchange_data.py (halves each)",
        "embedded Qdrant (local mode) on disk, all-MiniLM-L6-v2 in process",
        f"{os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.2f}",
    )
    # Embedded Qdrant warns above 20k points; the 100k row is here to show why.
    warnings.filterwarnings("ignore", message="Local mode is not recommended")
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as tmp:
        asyncio.run(bench(Path(tmp), parts, rerank=args.rerank))
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
