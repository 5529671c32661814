"""Does indexing episodes cost the first token? DuckLM indexing them against not.

Three DuckLMs in this process on the same scripted model server (zero latency), each
with its own data dir, the in-process MiniLM (the default, and the case where the
writer's encoding could queue before the next request's on the model thread): one with
`DUCK_EPISODES` on; the baseline with episodes on and the same seeded episodes but its
writer taken away, so its turns search episodes in recall as the first's do and index
nothing; and one with episodes off (what recall's search of episodes costs beside the
writer). Turns go round the three with a new text each, at three paces in turn: back
to back (the writer, which waits for a quiet moment, writes after the last), 0.6 s
apart (just after its 0.5 s of quiet: the next turn comes while it writes, the worst
case) and 1.5 s apart. The time from `stream()`
to the first `token` event is taken. Critic and memory policy off: only the core path.
The first rounds of each pace warm up.

    .venv/bin/python scripts/bench/episode_first_token.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import (
    Reply,
    ScriptedLLM,
    duck_settings,
    header,
    median_ms,
    p90_ms,
    reply,
    table,
    verdict,
)

from ducklm.runtime.facade import DuckLM

TURNS = 40
WARMUP = 4
GAP_S = (0.0, 0.6, 1.5)  # back to back, just after the writer's pause, a person's pace
MAX_RATIO = 1.05
"""Indexing adds nothing to the first token: within the noise of medians (5%)."""


def respond(body: dict[str, Any]) -> Reply:
    return reply("Noted, thanks for telling me about that.")


async def first_token(duck: DuckLM, text: str, thread: str) -> float:
    start = time.perf_counter()
    first = None
    async for item in duck.stream(text, thread_id=thread, critic=False, memory=False):
        if item["type"] == "token" and first is None:
            first = time.perf_counter() - start
    assert first is not None, "no token event"
    return first


SEED_TURNS = 30
"""Turns every DuckLM with episodes gets before the timed ones, so recall has episodes
to search (and to show) in both the indexing DuckLM and its baseline."""
OFF, SEARCH_ONLY, ON = "episodes off", "episodes on, not indexing", "episodes on, indexing"


async def bench(root: Path, llm: ScriptedLLM) -> None:
    on = duck_settings(llm.base_url, root / "on")
    search_only = on.model_copy(update={"data_dir": root / "search" / "data"})
    off = on.model_copy(update={"data_dir": root / "off" / "data", "episodes": False})
    times: dict[tuple[str, float], list[float]] = {}
    async with (
        DuckLM.open(on) as indexing,
        DuckLM.open(search_only) as searching,
        DuckLM.open(off) as without,
    ):
        writer, store = indexing.episode_writer, indexing.context.episodes
        assert writer is not None and store is not None and searching.episode_writer
        for n in range(SEED_TURNS):
            for duck in (indexing, searching):
                await first_token(duck, f"Seed {n}: my friend told me about the lake.", "seed")
        await asyncio.gather(writer.idle(), searching.episode_writer.idle())
        searching.episode_writer = None  # from here on it searches episodes, writes none
        ducks = ((ON, indexing), (SEARCH_ONLY, searching), (OFF, without))
        written: dict[float, int] = {}
        # One pace at a time: interleaving paces would put a long pause (where the writer
        # writes) before every back-to-back turn.
        for gap in GAP_S:
            before = len(await store.list(limit=10_000))
            for n in range(WARMUP + TURNS):
                for name, duck in ducks:
                    text = f"My friend number {n} told me about the lake trip in round {gap}."
                    took = await first_token(duck, text, f"{name}-{n % 4}")
                    if n >= WARMUP:
                        times.setdefault((name, gap), []).append(took)
                    await asyncio.sleep(gap)
            written[gap] = len(await store.list(limit=10_000)) - before
            await writer.idle()
    rows = []
    for gap in GAP_S:
        base = median_ms(times[(SEARCH_ONLY, gap)])
        for name, _ in reversed(ducks):
            t = times[(name, gap)]
            rows.append([f"{name}, next turn after {gap:.1f} s", median_ms(t), p90_ms(t),
                         median_ms(t) / base])  # fmt: skip
    table(["first token", "p50 ms", "p90 ms", "x not indexing"], rows)
    during = ", ".join(f"{n} at {gap:.1f} s" for gap, n in written.items())
    print(f"episodes written during the timed turns: {during}")
    for gap in GAP_S:
        ratio = median_ms(times[(ON, gap)]) / median_ms(times[(SEARCH_ONLY, gap)])
        verdict(f"indexing / not indexing, next turn after {gap:.1f} s", ratio, MAX_RATIO, "x")


def main() -> None:
    header(
        "First token with episodes indexed behind each turn, against episodes off",
        f"{TURNS} turns each after {WARMUP} warm-up, interleaved, in-process MiniLM",
        f"{os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.2f}",
    )
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as tmp, ScriptedLLM() as llm:
        llm.set_responder(respond)
        asyncio.run(bench(Path(tmp), llm))


if __name__ == "__main__":
    main()
