"""MCP tool selection under a budget: is the right tool offered for a request?

When the servers' schemas do not fit `DUCK_MCP_TOOL_TOKENS`, `ducklm/mcp/selection.py`
offers a few. This takes the real `tools/list` of the npm reference servers (everything,
filesystem, memory: 36 tools) and the requests of `data/mcp_tool_requests.yaml`, each
naming its right tool(s), and prints for the tuning half and the held-out half the
share of requests whose right tools are all offered, at 1,000 / 1,500 (the default) /
3,000 tokens, for selection.py (with the in-process MiniLM, and without it as while it
loads) against plain baselines measured in the same run: the first tools that fit, BM25
over names and descriptions, and the embedding alone (what selection.py did before).

    .venv/bin/python scripts/bench/mcp_tool_selection.py                  # servers started
    .venv/bin/python scripts/bench/mcp_tool_selection.py --fixture        # captured lists
    .venv/bin/python scripts/bench/mcp_tool_selection.py --write-fixture  # refresh the fixture

The held-out misses are not printed unless `--show-held-out` is given: the held-out half
is for measuring, not for tuning.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml
from _common import at_least, header, table
from langchain_core.tools import BaseTool

from ducklm.config.settings import Settings
from ducklm.learning.skills import Embed, cosines
from ducklm.mcp.selection import choose_tools, fit_in_order, schema_tokens
from ducklm.memory.bm25 import BM25Index
from ducklm.memory.embeddings import LocalEmbedder
from tests.support.mcp_tool_lists import (
    NPM_TOOLS_FIXTURE,
    ToolLists,
    as_tools,
    capture_tool_lists,
    load_tool_lists,
)

DATA = Path(__file__).resolve().parent / "data" / "mcp_tool_requests.yaml"
DEFAULT_BUDGET = Settings.model_fields["mcp_tool_tokens"].default
BUDGETS = (1000, DEFAULT_BUDGET, 3000)
TARGET = 0.90

Choose = Callable[[Sequence[BaseTool], str, int], Awaitable[list[BaseTool]]]


@dataclass(frozen=True)
class Case:
    """One request and what serves it: all of `tools`, and one of `any_of` if given."""

    request: str
    tools: tuple[str, ...]
    any_of: tuple[str, ...]

    def served(self, offered: set[str]) -> bool:
        """Whether the offered tool names serve this request."""
        return set(self.tools) <= offered and (not self.any_of or bool(offered & set(self.any_of)))


def load_cases(path: Path = DATA) -> dict[str, list[Case]]:
    """The halves of the request set: `tuning` and `held_out`."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {
        half: [
            Case(c["request"], tuple(c.get("tools", ())), tuple(c.get("any_of", ()))) for c in cases
        ]
        for half, cases in raw.items()
    }


def baselines(embed: Embed) -> dict[str, Choose]:
    """The plain methods, filled greedily in their order as selection.py fills its own."""

    def by_order(rank: Callable[[Sequence[BaseTool], str], Awaitable[list[int]]]) -> Choose:
        async def choose(tools: Sequence[BaseTool], request: str, budget: int) -> list[BaseTool]:
            costs = [schema_tokens(t) for t in tools]
            return [tools[i] for i in fit_in_order(await rank(tools, request), costs, budget)]

        return choose

    async def file_order(tools: Sequence[BaseTool], _: str) -> list[int]:
        return list(range(len(tools)))

    async def bm25(tools: Sequence[BaseTool], request: str) -> list[int]:
        index = BM25Index.build((str(i), f"{t.name} {t.description}") for i, t in enumerate(tools))
        scores = index.score(request, [str(i) for i in range(len(tools))])
        return sorted(range(len(tools)), key=lambda i: -scores[str(i)])

    async def cosine(tools: Sequence[BaseTool], request: str) -> list[int]:
        texts = [f"{t.name.replace('__', ' ')}: {t.description}" for t in tools]
        vectors = np.asarray(await embed([request, *texts]), dtype=np.float64)
        similarity = cosines(vectors[0], vectors[1:])
        return sorted(range(len(tools)), key=lambda i: -similarity[i])

    async def shipped(tools: Sequence[BaseTool], request: str, budget: int) -> list[BaseTool]:
        return await choose_tools(tools, request, budget=budget, embed=embed)

    async def words_only(tools: Sequence[BaseTool], request: str, budget: int) -> list[BaseTool]:
        return await choose_tools(tools, request, budget=budget, embed=None)

    return {
        "first that fit (file order)": by_order(file_order),
        "BM25 names+descriptions": by_order(bm25),
        "embedding alone (MiniLM)": by_order(cosine),
        "selection.py, no embedder": words_only,
        "selection.py": shipped,
    }


def memo(embed: Embed) -> Embed:
    """`embed` encoding each text once per run: the methods share one set of vectors."""
    vectors: dict[str, np.ndarray] = {}

    async def encode(texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in vectors]
        if missing:
            vectors.update(zip(missing, np.asarray(await embed(missing)), strict=True))
        return np.stack([vectors[t] for t in texts])

    return encode


async def share(
    choose: Choose, tools: list[BaseTool], cases: list[Case], budget: int
) -> tuple[float, list[Case]]:
    """The share of `cases` served at `budget`, and the cases missed."""
    missed = [
        c for c in cases if not c.served({t.name for t in await choose(tools, c.request, budget)})
    ]
    return 1 - len(missed) / len(cases), missed


async def tool_lists(args: argparse.Namespace) -> ToolLists:
    """The servers' lists: captured now (and saved with --write-fixture), or the fixture."""
    if args.fixture:
        return load_tool_lists()
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as scratch:
        lists = await capture_tool_lists(Path(scratch))
    if args.write_fixture:
        NPM_TOOLS_FIXTURE.write_text(json.dumps(lists, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {NPM_TOOLS_FIXTURE}")
    return lists


async def main(args: argparse.Namespace) -> None:
    """Measure every method on both halves at each budget."""
    tools = as_tools(await tool_lists(args))
    cases = load_cases()
    embed = memo(LocalEmbedder(Settings.model_fields["embeddings_model"].default).embed)
    total = sum(schema_tokens(t) for t in tools)
    header(
        "MCP tool selection under a budget",
        f"{len(tools)} tools of the npm everything/filesystem/memory servers, "
        f"{total} schema tokens",
        f"requests: {', '.join(f'{h} {len(c)}' for h, c in cases.items())}; "
        f"default budget {DEFAULT_BUDGET}",
    )
    methods = baselines(embed)
    columns = ["method", *(f"{half} @{b}" for half in cases for b in BUDGETS)]
    rows, misses = [], {}
    for name, choose in methods.items():
        row: list[object] = [name]
        for half, half_cases in cases.items():
            for budget in BUDGETS:
                value, missed = await share(choose, tools, half_cases, budget)
                row.append(value)
                misses[name, half, budget] = missed
        rows.append(row)
    table(columns, rows)
    await _offered_and_time(methods["selection.py"], tools, cases["tuning"])
    shown = ["tuning", "held_out"] if args.show_held_out else ["tuning"]
    for half in shown:
        for case in misses["selection.py", half, DEFAULT_BUDGET]:
            print(
                f"   missed ({half} @{DEFAULT_BUDGET}): {case.request!r}"
                f" -> {case.tools or case.any_of}"
            )
    held_out = 1 - len(misses["selection.py", "held_out", DEFAULT_BUDGET]) / len(cases["held_out"])
    at_least(f"held-out share served at {DEFAULT_BUDGET} tokens (selection.py)", held_out, TARGET)


async def _offered_and_time(choose: Choose, tools: list[BaseTool], cases: list[Case]) -> None:
    """How many tools selection.py offers at each budget, and what a selection costs."""
    for budget in BUDGETS:
        started = time.perf_counter()
        counts = [len(await choose(tools, c.request, budget)) for c in cases]
        each_ms = (time.perf_counter() - started) / len(cases) * 1000
        print(
            f"   @{budget}: {min(counts)}-{max(counts)} tools offered, {each_ms:.0f} ms a selection"
        )
    print()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixture", action="store_true", help="use the captured tool lists")
    parser.add_argument("--write-fixture", action="store_true", help="save the lists taken now")
    parser.add_argument("--show-held-out", action="store_true", help="print the held-out misses")
    asyncio.run(main(parser.parse_args()))
