"""Which MCP tools a turn offers: all that fit the budget, else the nearest to the request.

A small model cannot take fifty schemas: they cost prompt tokens and attention. When
the tools' schemas do not fit `DUCK_MCP_TOOL_TOKENS`, the tools whose name and
description are nearest the request (the memory's embedding model, cosine) are offered,
nearest first, as many as fit. Without an embedder, or when it fails, they are taken in
the file's order: a broken embedding model must not stop a turn.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

import numpy as np
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from ducklm.learning.skills import Embed, cosines
from ducklm.models.tokens import estimate_tokens

log = logging.getLogger(__name__)


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
    order = await _nearest_first(tools, request, embed)
    chosen: list[int] = []
    spent = 0
    for index in order:
        if spent + costs[index] <= budget:
            chosen.append(index)
            spent += costs[index]
    return [tools[i] for i in chosen]


async def _nearest_first(tools: Sequence[BaseTool], request: str, embed: Embed | None) -> list[int]:
    if embed is None or not request.strip():
        return list(range(len(tools)))
    texts = [f"{t.name.replace('__', ' ')}: {t.description}" for t in tools]
    try:
        vectors = np.asarray(await embed([request, *texts]), dtype=np.float64)
        similarity = cosines(vectors[0], vectors[1:])
    except Exception:  # another component's model: whatever it raises, keep the order
        log.warning("MCP tool selection could not embed; tools kept in order", exc_info=True)
        return list(range(len(tools)))
    return sorted(range(len(tools)), key=lambda i: -similarity[i])
