"""Time-aware questions measured on the episodes store, with and without DuckLM's dates.

Each question (`dated_questions.py`) is asked as the recall node asks the episodes
store, from another conversation of the same workspace, at the moment the generator
says it is asked:

- plain: the store's hybrid search (no reading of dates), the baseline;
- with dates: what the recall node does, `ducklm/memory/dates.py:find_window` reads a
  time in the question (relative to the moment asked), and the node's own search
  (`nodes/recall.py:_search`) looks within it first, everywhere when nothing was said
  then.

Measured: recall@5 of the evidence turns, and whether the date DuckLM would give is
right: the `created_at` of the top hit the node shows the model (the best episode
scoring at least `EPISODE_MIN_SCORE`) falls on a day an evidence turn was said.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import date, datetime

from _common import table
from dialogue_data import Conversation

import ducklm.graph  # noqa: F401  the nodes load in the graph's order (a node first is circular)
from ducklm.memory import MemoryHit, MemoryStore
from ducklm.memory.dates import find_window
from ducklm.nodes.recall import (  # the node's own search, measured as it runs
    EPISODE_MIN_SCORE,
    Where,
    _search,
)

K = 5


@dataclass(frozen=True)
class TimedAsked:
    """One time-aware question and what each way of searching returned."""

    set: str
    split: str
    kind: str
    evidence: frozenset[str]
    days: frozenset[date]
    plain: list[MemoryHit]
    dated: list[MemoryHit]
    window: bool
    """Whether a time was read in the question."""


async def ask_timed(
    store: MemoryStore, name: str, split: str, convo: Conversation, *, ids: dict[str, str],
    asker: str,
) -> list[TimedAsked]:  # fmt: skip
    """Every time-aware question of `convo`, asked plain and with dates."""
    where = Where(f"/bench/{convo.id}", asker)
    asked = []
    for q in convo.timed:
        plain = await _search(store, q.text, where, None, k=K, others_only=True)
        window = await asyncio.to_thread(find_window, q.text, q.asked_at.timestamp())
        dated = await _search(store, q.text, where, window, k=K, others_only=True)
        evidence = frozenset(ids[e] for e in q.evidence)
        found = (plain.hits, dated.hits, window is not None)
        asked.append(TimedAsked(name, split, q.kind, evidence, q.days, *found))
    return asked


def recall(hits: list[MemoryHit], evidence: frozenset[str]) -> float:
    """The share of the evidence among the top `K` hits."""
    return len(evidence & {h.record.id for h in hits[:K]}) / len(evidence)


def date_right(hits: list[MemoryHit], days: frozenset[date]) -> float:
    """1.0 when the top hit shown to the model was said on an evidence day."""
    shown = [h for h in hits if h.score >= EPISODE_MIN_SCORE]
    return float(bool(shown) and datetime.fromtimestamp(shown[0].record.created_at).date() in days)


def report_timed(asked: list[TimedAsked]) -> None:
    """One row per set, kind and split: recall@5 and right dates, plain and with dates."""
    groups: dict[tuple[str, str, str], list[TimedAsked]] = {}
    for a in asked:
        groups.setdefault((a.set, a.kind, a.split), []).append(a)
    print(
        "time-aware questions (episodes): recall@5 of the evidence turn, and the date of the "
        "top hit shown to the model; plain = hybrid search, dates = find_window + within first"
    )
    rows = []
    for (name, kind, split), group in groups.items():
        rows.append([
            name, kind, split, len(group),
            mean([recall(a.plain, a.evidence) for a in group]),
            mean([recall(a.dated, a.evidence) for a in group]),
            mean([date_right(a.plain, a.days) for a in group]),
            mean([date_right(a.dated, a.days) for a in group]),
            f"{mean([float(a.window) for a in group]):.0%}",
        ])  # fmt: skip
    table(
        ["set", "kind", "split", "n", "recall plain", "recall dates", "date plain",
         "date dates", "time read"],
        rows,
    )  # fmt: skip


def mean(values: list[float]) -> float:
    """The mean of `values` (never empty here)."""
    return sum(values) / len(values)
