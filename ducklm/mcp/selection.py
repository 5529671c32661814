"""Which MCP tools a turn offers: all that fit the budget, else the nearest to the request.

A small model cannot take fifty schemas: they cost prompt tokens and attention. When
the tools' schemas do not fit `DUCK_MCP_TOOL_TOKENS`, the tools are ranked and offered
in that order, as many as fit:

1. a tool the request names (`create_entities`, `get-sum`, `memory__read_graph`) first;
2. then by keywords (BM25 over the server's name, the tool's name split into words, its
   description and, from its annotations, the words people use for its effect) fused
   with meaning (the memory's embedding model, cosine of the request to the same text),
   each side in its own standard deviations over the tools as the memory's hybrid
   search does (`ducklm/memory/fusion.py:z_score`).

Keywords alone place a tool whose words the request uses; meaning alone missed
"remember ... that Ana lives in Porto" for `memory__create_entities` (issue 29): both
together serve 0.97 of `scripts/bench/mcp_tool_selection.py`'s held-out requests at
1,500 tokens, against 0.80 for meaning alone and 0.50 for BM25 alone. Without an
embedder (it is loading), or when it fails, the keywords rank alone: a broken embedding
model must not stop a turn. The tools' vectors are kept (their text rarely changes), so
a turn encodes only its request.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence

import numpy as np
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from ducklm.learning.skills import Embed, cosines
from ducklm.memory.bm25 import BM25Index
from ducklm.memory.fusion import z_score
from ducklm.models.tokens import estimate_tokens
from ducklm.tools.mcp_info import SEPARATOR, mcp_info

log = logging.getLogger(__name__)

MEANING_WEIGHT = 0.5
"""Cosine's share of the fused score: equal, as in the memory's search. On the tuning
half, 0.3-0.7 served the same share at the default budget."""
EFFECT_WORDS = {
    "reads": "reads, looks up, shows",
    "writes": "adds, saves, stores, keeps, remembers, creates",
    "destroys": "deletes, removes, forgets, drops, overwrites",
}
"""A tool's effect, as its server's annotations state it, in the words people use for it:
descriptions say "create entities", a person says "remember that" or "forget him"."""
MAX_KEPT_VECTORS = 1024
"""Tool texts whose vectors are kept (a few servers' tools; past it the oldest go)."""

# A tool's name in a request, with `_`, `-` or a space between its words.
_NAME_PARTS = re.compile(r"[-_\s]+")
_kept: dict[tuple[Embed, str], np.ndarray] = {}


def schema_tokens(tool: BaseTool) -> int:
    """About how many prompt tokens `tool`'s schema takes when bound natively."""
    return estimate_tokens(json.dumps(convert_to_openai_tool(tool)))


async def choose_tools(
    tools: Sequence[BaseTool], request: str, *, budget: int, embed: Embed | None
) -> list[BaseTool]:
    """The tools of `tools` this turn offers: all when they fit `budget` tokens."""
    costs = [schema_tokens(t) for t in tools]
    if sum(costs) <= budget:
        return list(tools)
    order = await rank_tools(tools, request, embed)
    return [tools[i] for i in fit_in_order(order, costs, budget)]


def fit_in_order(order: Sequence[int], costs: Sequence[int], budget: int) -> list[int]:
    """The indices of `order` that fit `budget` when taken in turn (one too big is skipped)."""
    chosen: list[int] = []
    spent = 0
    for index in order:
        if spent + costs[index] <= budget:
            chosen.append(index)
            spent += costs[index]
    return chosen


async def rank_tools(tools: Sequence[BaseTool], request: str, embed: Embed | None) -> list[int]:
    """Indices of `tools`, best first: named in the request, then keywords and meaning."""
    if not request.strip():
        return list(range(len(tools)))
    texts = [tool_text(t) for t in tools]
    ids = [str(i) for i in range(len(tools))]
    index = BM25Index.build(zip(ids, texts, strict=True))
    score = z_score(index.score(request, ids))
    meaning = await _meaning(texts, request, embed)
    if meaning is not None:
        near = z_score({d: float(s) for d, s in zip(ids, meaning, strict=True)})
        score = {d: (1 - MEANING_WEIGHT) * score[d] + MEANING_WEIGHT * near[d] for d in ids}
    named = {i for i, t in enumerate(tools) if names_tool(request, t.name)}
    return sorted(range(len(tools)), key=lambda i: (i not in named, -score[str(i)], i))


def tool_text(tool: BaseTool) -> str:
    """What stands for a tool in ranking: its server, its name's words, its description."""
    words = _NAME_PARTS.sub(" ", tool.name.replace(SEPARATOR, " "))
    text = f"{words}: {' '.join(tool.description.split())}"
    effect = _effect(tool)
    return f"{text} ({EFFECT_WORDS[effect]})" if effect else text


def _effect(tool: BaseTool) -> str | None:
    """What the server's annotations say the tool does: reads, writes, destroys (or None)."""
    info = mcp_info(tool)
    hints = info.annotations if info is not None else {}
    if hints.get("destructiveHint") is True:
        return "destroys"
    if hints.get("readOnlyHint") is True:
        return "reads"
    return "writes" if hints.get("readOnlyHint") is False else None


def names_tool(request: str, name: str) -> bool:
    """Whether `request` names the tool `<server>__<tool>` (or its MCP name) verbatim.

    `_`, `-` and a space count as the same: "get sum", "get-sum" and "get_sum" all name
    `get-sum`. A one-word name counts only with its server (`echo` alone is a word).
    """
    server, _, tool = name.rpartition(SEPARATOR)
    candidates = [name] if not server or _NAME_PARTS.search(tool) is None else [name, tool]
    text = request.lower()
    for candidate in candidates:
        parts = [re.escape(p) for p in _NAME_PARTS.split(candidate.lower()) if p]
        if re.search(r"(?<![\w-])" + r"[-_\s]+".join(parts) + r"(?![\w-])", text):
            return True
    return False


async def _meaning(texts: list[str], request: str, embed: Embed | None) -> list[float] | None:
    """Cosine of the request to each text, or None without a working embedder."""
    if embed is None:
        return None
    known = {t: _kept[embed, t] for t in texts if (embed, t) in _kept}
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    try:
        vectors = np.asarray(await embed([request, *missing]), dtype=np.float64)
    except Exception:  # another component's model: whatever it raises, keywords rank alone
        log.warning("MCP tool selection could not embed; keywords rank alone", exc_info=True)
        return None
    for text, vector in zip(missing, vectors[1:], strict=True):
        known[text] = vector
        if len(_kept) >= MAX_KEPT_VECTORS:
            del _kept[next(iter(_kept))]
        _kept[embed, text] = vector
    return cosines(vectors[0], np.stack([known[t] for t in texts]))
