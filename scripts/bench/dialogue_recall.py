"""Episodic recall on generated dialogues: every method on both halves, fusion tuned on one.

The data (`dialogue_data.py`, seed 15): 20 conversations between two people, 8-12 dated
sessions each, every turn stored as an episode (`"Name: what they said"`) in the
conversation's own workspace, asked from another conversation; 728 questions (one
fact, several facts, when, open) with their evidence turns. recall@5 is the share of a
question's evidence turns in the top 5, averaged over questions.

Methods, in one run on the same stores: DuckLM's hybrid `search` (the shipped weight),
BM25 alone, MiniLM alone (`nearest`), reciprocal rank fusion (k=60) of the same two
candidate lists, and DuckLM's fusion at each cosine weight. The weight is chosen on the
tuning half only (conversations 0-9); the held-out half (10-19) is reported with it.
Also: the episodic write cost per turn (what the writer does behind a turn: encode two
messages, store them), and a check that no question sees another workspace.

    .venv/bin/python scripts/bench/dialogue_recall.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from _common import duck_settings, header, median_ms, p90_ms, table
from dialogue_data import Conversation, generate, halves

from ducklm.memory import MemoryStore, NewMemory, open_episodes, open_memory
from ducklm.memory.bm25 import BM25Index
from ducklm.memory.episodes import index_new
from ducklm.memory.fusion import EPISODE_WEIGHT
from ducklm.memory.fusion import convex as fuse
from ducklm.stores import open_database

K = 5
CANDIDATES = 30
ASKER = "asking-conversation"
WRITE_TURNS = 60
TARGET_GAIN = 1.15
WEIGHTS = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9, 1.0)


def rrf(rankings: list[list[str]], k: int = 60) -> list[str]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1 / (k + rank)
    return sorted(scores, key=lambda d: -scores[d])


def workspace(convo: Conversation) -> str:
    return f"/bench/{convo.id}"


def items(convo: Conversation) -> list[NewMemory]:
    return [
        NewMemory(
            f"{t.speaker}: {t.text}",
            scope="workspace",
            workspace=workspace(convo),
            conversation_id=f"{convo.id}:s{t.session}",
            memory_type="user",
            metadata={"turn": t.id},
            said_at=t.said_at.timestamp(),
        )
        for t in convo.turns
    ]


def covered(ranked: Sequence[str], evidence: set[str]) -> float:
    return len(evidence & set(ranked[:K])) / len(evidence)


async def ask(
    store: MemoryStore, convo: Conversation, ids: dict[str, str], keywords: BM25Index
) -> dict[str, list[float]]:
    """recall@5 per method for each question of `convo`."""
    scores: dict[str, list[float]] = {}
    turn_of = {memory_id: turn for turn, memory_id in ids.items()}
    leaked = 0
    for q in convo.questions:
        evidence = {ids[e] for e in q.evidence}
        where = {"workspace": workspace(convo), "conversation_id": ASKER}
        hybrid = await store.search(q.text, k=K, **where)
        near = await store.nearest(q.text, k=CANDIDATES, **where)
        vector = {h.record.id: h.score for h in near}
        keyword = dict(keywords.search(q.text, lambda _: True, CANDIDATES))
        leaked += sum(h.record.id not in turn_of for h in hybrid.hits)
        _note(
            scores, "DuckLM hybrid (search)", covered([h.record.id for h in hybrid.hits], evidence)
        )
        _note(scores, "BM25 alone", covered(list(keyword), evidence))
        _note(scores, "MiniLM alone (nearest)", covered(list(vector), evidence))
        _note(
            scores,
            "RRF k=60 of the same lists",
            covered(rrf([list(vector), list(keyword)]), evidence),
        )
        keyword.update(keywords.score(q.text, vector.keys() - keyword.keys()))
        weight = keywords.query_weight(q.text)
        for w in WEIGHTS:
            ranked = [f.id for f in fuse(vector, keyword, weight, weight=w)]
            _note(scores, f"w={w}", covered(ranked, evidence))
        for kind in ("single", "multi", "when", "open"):
            if q.kind == kind:
                _note(
                    scores, f"hybrid:{kind}", covered([h.record.id for h in hybrid.hits], evidence)
                )
                _note(scores, f"bm25:{kind}", covered(list(keyword)[:K], evidence))
    scores["leaked"] = [float(leaked)]
    return scores


def _note(scores: dict[str, list[float]], method: str, value: float) -> None:
    scores.setdefault(method, []).append(value)


def merge(parts: list[dict[str, list[float]]]) -> dict[str, list[float]]:
    merged: dict[str, list[float]] = {}
    for part in parts:
        for method, values in part.items():
            merged.setdefault(method, []).extend(values)
    return merged


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


async def write_cost(store: MemoryStore, convo: Conversation) -> list[float]:
    """Seconds per turn the episode writer spends: two messages encoded and stored."""
    times = []
    pairs = items(convo)[: 2 * WRITE_TURNS]
    for start in range(0, len(pairs), 2):
        batch = [
            NewMemory(i.text, scope="workspace", workspace="/bench/writes",
                      conversation_id="writes", id=None, said_at=i.said_at)
            for i in pairs[start : start + 2]
        ]  # fmt: skip
        begin = time.perf_counter()
        await index_new(store, [_with_id(b, n + start) for n, b in enumerate(batch)])
        times.append(time.perf_counter() - begin)
    return times


def _with_id(item: NewMemory, n: int) -> NewMemory:
    return replace(item, id=f"00000000-0000-4000-8000-{n:012d}")


async def bench(root: Path) -> None:
    settings = duck_settings("http://127.0.0.1:9/v1", root)
    await asyncio.to_thread(settings.data_dir.mkdir, parents=True)
    data = generate()
    tune, held = halves(data)
    async with open_database(settings.files.database) as db, open_memory(settings, db) as facts:
        store = await open_episodes(settings, db, facts)
        start = time.perf_counter()
        ids_by_convo = {}
        for convo in data:
            stored = await store.add_many(items(convo))
            ids_by_convo[convo.id] = {t.id: r.id for t, r in zip(convo.turns, stored, strict=True)}
        ingest = sum(len(c.turns) for c in data) / (time.perf_counter() - start)
        results = {}
        for convo in data:
            keywords = BM25Index.build((ids_by_convo[convo.id][t.id], f"{t.speaker}: {t.text}")
                                       for t in convo.turns)  # fmt: skip
            results[convo.id] = await ask(store, convo, ids_by_convo[convo.id], keywords)
        writes = await write_cost(store, data[0])
    report(tune, held, results, ingest, writes)


def report(
    tune: list[Conversation],
    held: list[Conversation],
    results: dict[str, dict[str, list[float]]],
    ingest: float,
    writes: list[float],
) -> None:
    on_tune = merge([results[c.id] for c in tune])
    on_held = merge([results[c.id] for c in held])
    n_tune = sum(len(c.questions) for c in tune)
    n_held = sum(len(c.questions) for c in held)
    methods = [m for m in on_tune if not m.startswith(("w=", "hybrid:", "bm25:", "leaked"))]
    print(f"recall@5 on dialogues: tuning half {n_tune} questions, held-out half {n_held}")
    table(
        ["method", "tuning half", "held-out half", "held-out / BM25"],
        [[m, mean(on_tune[m]), mean(on_held[m]), mean(on_held[m]) / mean(on_held["BM25 alone"])]
         for m in methods],
    )  # fmt: skip
    best = max(WEIGHTS, key=lambda w: mean(on_tune[f"w={w}"]))
    shipped = f"w={EPISODE_WEIGHT}"
    gap = (mean(on_tune[f"w={best}"]) - mean(on_tune[shipped])) * n_tune
    print(
        f"Cosine weight sweep: best on the tuning half only {best}, "
        f"{gap:.1f} questions' worth above the shipped {EPISODE_WEIGHT}"
    )
    table(
        ["cosine weight", "tuning half", "held-out half", "tuning, questions vs shipped"],
        [[f"w={w}", mean(on_tune[f"w={w}"]), mean(on_held[f"w={w}"]),
          (mean(on_tune[f"w={w}"]) - mean(on_tune[shipped])) * n_tune] for w in WEIGHTS],
    )  # fmt: skip
    print("By kind of question, held-out half (DuckLM hybrid / BM25 alone):")
    kinds = ("single", "multi", "when", "open")
    table(
        ["kind", "questions", "hybrid", "BM25"],
        [[k, len(on_held[f"hybrid:{k}"]), mean(on_held[f"hybrid:{k}"]), mean(on_held[f"bm25:{k}"])]
         for k in kinds],
    )  # fmt: skip
    leaked = sum(on_tune["leaked"]) + sum(on_held["leaked"])
    print(f"hits from another workspace: {leaked:.0f}")
    table(
        ["episodes", "ingest / s", "write per turn p50 ms", "p90 ms"],
        [[f"{sum(len(c.turns) for c in tune + held)}", ingest, median_ms(writes), p90_ms(writes)]],
    )
    gain = mean(on_held["DuckLM hybrid (search)"]) / mean(on_held["BM25 alone"])
    mark = "PASS" if gain >= TARGET_GAIN else "MISS"
    print(f"{mark}  held-out hybrid / BM25: {gain:.2f}x (target >= {TARGET_GAIN}x)")


def main() -> None:
    header(
        "Episodic recall on generated dialogues",
        "dialogue_data.py seed 15: 20 conversations, each in its own workspace",
        "embedded Qdrant (local mode) on disk, all-MiniLM-L6-v2 in process",
        f"{os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.2f}",
    )
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as tmp:
        asyncio.run(bench(Path(tmp)))


if __name__ == "__main__":
    main()
