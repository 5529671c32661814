"""Does indexing episodes cost the first token? DuckLM with episodes on against off.

Two DuckLMs in this process on the same scripted model server (zero latency), each with
its own data dir, the in-process MiniLM (the default, and the case where the writer's
encoding could queue before the next request's on the model thread): one with
`DUCK_EPISODES` on, the baseline with it off. Turns alternate between them, back to
back with a new text each (the worst case for a writer behind the turn: the next
request comes at once), and the time from `stream()` to the first `token` event is
taken. Critic and memory policy off: only the core path. The first rounds warm up.

    .venv/bin/python scripts/bench/episode_first_token.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import Reply, ScriptedLLM, duck_settings, header, median_ms, p90_ms, reply, table

from ducklm.runtime.facade import DuckLM

TURNS = 40
WARMUP = 4
GAP_S = (0.0, 0.6)  # back to back, and just after the writer's pause


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


async def bench(root: Path, llm: ScriptedLLM) -> None:
    on = duck_settings(llm.base_url, root / "on")
    off = on.model_copy(update={"data_dir": root / "off" / "data", "episodes": False})
    times: dict[tuple[str, float], list[float]] = {}
    async with DuckLM.open(on) as with_episodes, DuckLM.open(off) as without:
        for n in range(WARMUP + TURNS):
            for gap in GAP_S:
                for name, duck in (("episodes on", with_episodes), ("episodes off", without)):
                    text = f"My friend number {n} told me about the lake trip in round {gap}."
                    took = await first_token(duck, text, f"{name}-{n % 4}")
                    if n >= WARMUP:
                        times.setdefault((name, gap), []).append(took)
                    await asyncio.sleep(gap)
        assert with_episodes.episode_writer is not None
        await with_episodes.episode_writer.idle()
        stored = await with_episodes.context.episodes.list(limit=10_000)  # type: ignore[union-attr]
    rows = []
    for gap in GAP_S:
        base = median_ms(times[("episodes off", gap)])
        for name in ("episodes off", "episodes on"):
            t = times[(name, gap)]
            rows.append([f"{name}, next turn after {gap:.1f} s", median_ms(t), p90_ms(t),
                         median_ms(t) / base])  # fmt: skip
    table(["first token", "p50 ms", "p90 ms", "x episodes off"], rows)
    print(f"episodes written meanwhile: {len(stored)}")


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
