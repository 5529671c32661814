"""The memory benchmark's recall sets, each stored for real and asked through the store.

Three sets that disagree: the written facts (`memory_data.py`, paraphrased questions
and keyword lookups among 10k filler memories), the generated dialogues
(`dialogue_data.py`) and the generated exchanges (`exchange_data.py`: short factual
exchanges with names and dates, long rambling turns with paraphrased evidence). Every
question yields the candidate pool the store's search sees (`fusion_methods.Pool`), the
store's own hybrid ranking, its evidence and its split (`tune` or `held`). The dialogue
sets' time-aware questions are asked apart (`memory_dated.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

import dialogue_data
import exchange_data
from dialogue_data import Conversation
from fusion_methods import Pool
from memory_data import CONVERSATION, WORKSPACE, Data, visible
from memory_dated import TimedAsked, ask_timed

from ducklm.memory import MemoryRecord, MemoryStore, NewMemory
from ducklm.memory.bm25 import BM25Index

K = 5
CANDIDATES = 30
ASKER = "asking-conversation"


@dataclass(frozen=True)
class Asked:
    """One question: its pool, the store's hybrid ranking, what answers it, its split."""

    set: str
    split: str
    pool: Pool
    hybrid: list[str]
    evidence: frozenset[str]
    texts: dict[str, str]
    """The text of every candidate in the pool (for a reranker)."""


def recall_at_k(ranked: list[str], evidence: frozenset[str]) -> float:
    """The share of the evidence in the top K."""
    return len(evidence & set(ranked[:K])) / len(evidence)


async def ask(
    store: MemoryStore, query: str, keywords: BM25Index, where: dict[str, str]
) -> tuple[Pool, list[str]]:
    """The pool the store's search sees for `query`, and the store's own ranking."""
    hybrid = await store.search(query, k=K, **where)
    near = await store.nearest(query, k=CANDIDATES, **where)
    vector = {h.record.id: h.score for h in near}
    top = keywords.search(query, lambda _: True, CANDIDATES)
    keyword = dict(top)
    keyword.update(keywords.score(query, vector.keys() - keyword.keys()))
    pool = Pool(query, vector, keyword, [i for i, _ in top], keywords.query_weight(query))
    return pool, [h.record.id for h in hybrid.hits]


async def fact_sets(
    store: MemoryStore, data: Data, stored: list[MemoryRecord], filler: list[MemoryRecord],
    items: list[NewMemory],
) -> list[Asked]:  # fmt: skip
    """The written facts among the filler: paraphrased questions, then keyword lookups."""
    wanted = {fact_id: r.id for fact_id, r in zip(data.ids, stored, strict=True)}
    shown = stored + [r for r, i in zip(filler, items, strict=True) if visible(i)]
    keywords = BM25Index.build((r.id, r.text) for r in shown)
    where = {"workspace": WORKSPACE, "conversation_id": CONVERSATION}
    asked = []
    for name, questions in (("facts", data.questions), ("fact lookups", data.lookups)):
        half = len(questions) // 2
        for n, q in enumerate(questions):
            pool, hybrid = await ask(store, q.text, keywords, where)
            split = "tune" if n < half else "held"
            evidence = frozenset({wanted[q.fact]})
            asked.append(Asked(name, split, pool, hybrid, evidence, candidates(pool, shown)))
    return asked


def candidates(pool: Pool, records: list[MemoryRecord]) -> dict[str, str]:
    """The texts of the pool's candidates, from the records they were drawn from."""
    ids = pool.vector.keys() | pool.keyword.keys()
    return {r.id: r.text for r in records if r.id in ids}


def turn_items(convo: Conversation) -> list[NewMemory]:
    """A conversation's turns as the episode writer stores them, in its own workspace."""
    return [
        NewMemory(
            f"{t.speaker}: {t.text}", scope="workspace", workspace=f"/bench/{convo.id}",
            conversation_id=f"{convo.id}:s{t.session}", memory_type="user",
            said_at=t.said_at.timestamp(),
        )
        for t in convo.turns
    ]  # fmt: skip


async def dialogue_sets(store: MemoryStore) -> tuple[list[Asked], list[TimedAsked]]:
    """Both generated dialogue sets, each conversation in its own workspace.

    Returns the questions of the fusion tables and, apart, the time-aware questions.
    """
    asked: list[Asked] = []
    timed: list[TimedAsked] = []
    for name, data in (
        ("dialogues", dialogue_data.generate()),
        ("exchanges", exchange_data.generate()),
    ):
        tune = {c.id for c in dialogue_data.halves(data)[0]}
        for convo in data:
            stored = await store.add_many(turn_items(convo))
            split = "tune" if convo.id in tune else "held"
            asked += await _ask_convo(store, name, split, convo, stored)
            ids = {t.id: r.id for t, r in zip(convo.turns, stored, strict=True)}
            timed += await ask_timed(store, name, split, convo, ids=ids, asker=ASKER)
    return asked, timed


async def _ask_convo(
    store: MemoryStore, name: str, split: str, convo: Conversation, stored: list[MemoryRecord]
) -> list[Asked]:
    ids = {t.id: r.id for t, r in zip(convo.turns, stored, strict=True)}
    keywords = BM25Index.build((r.id, r.text) for r in stored)
    replies = {
        ids[t.id]: ids[after.id]
        for t, after in zip(convo.turns, convo.turns[1:], strict=False)
        if t.text.rstrip().endswith("?") and t.session == after.session
    }
    where = {"workspace": f"/bench/{convo.id}", "conversation_id": ASKER}
    asked = []
    for q in convo.questions:
        pool, hybrid = await ask(store, q.text, keywords, where)
        pool = Pool(pool.query, pool.vector, pool.keyword, pool.keyword_top,
                    pool.query_weight, replies)  # fmt: skip
        evidence = frozenset(ids[e] for e in q.evidence)
        asked.append(Asked(name, split, pool, hybrid, evidence, candidates(pool, stored)))
    return asked
