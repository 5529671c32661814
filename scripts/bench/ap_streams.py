"""An Agent Protocol run's stream on the worker running it against one on another worker.

Two `ducklm serve` workers on a fresh schema of `DUCK_TEST_DATABASE_URL`
(scripts/test-postgres.sh prints one) and the scripted model. A background run on
worker A (`stream_mode` `values` + `messages-tuple`) is followed from its start
(`Last-Event-ID: -1`) by one SSE client on A and one on B at once; B's events come
through the relay (`NOTIFY` and the journal, `server/agent_protocol/runs/relay.py`).
Measured for each event id both got: how much later B had it than A (median, p95), and
each client's events/s from its first token to its last event, as the ratio B / A:

1. paced: the model sends a token every `PACED_S` (a model's rate);
2. burst: the model sends `BURST` tokens as fast as it can (the relay's ceiling).

    DUCK_TEST_DATABASE_URL=... .venv/bin/python scripts/bench/ap_streams.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from _common import ScriptedLLM, duck_settings, header, percentile_ms, postgres_url, reply, table

from ducklm.config.settings import Settings
from tests.support.postgres import fresh_schema
from tests.support.workers import Worker, start_worker, stop_worker

PACED = 300
PACED_S = 0.01
BURST = 2000
ROUNDS = 2
Arrivals = dict[str, float]
"""When each event id came (perf_counter)."""


async def arrivals(worker: Worker, thread: str, run: str) -> tuple[Arrivals, float]:
    """Each event id's arrival on `worker`, and when the first token came."""
    seen: Arrivals = {}
    first_token, ident = 0.0, ""
    path = f"/threads/{thread}/runs/{run}/stream"
    headers = {"Last-Event-ID": "-1"}
    async with worker.client.stream("GET", path, headers=headers, timeout=300) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line.startswith("id:"):
                ident = line.removeprefix("id:").strip()
                seen[ident] = time.perf_counter()
            elif line == "event: messages" and not first_token:
                first_token = time.perf_counter()
    return seen, first_token


async def one_run(a: Worker, b: Worker, llm: ScriptedLLM, words: int, gap_s: float) -> list[float]:
    """[lag median s, lag p95 s, A events/s, B events/s] of one run followed on A and B."""
    llm.set_default(reply(" ".join(f"w{n}" for n in range(words)), delay_s=1, chunk_delay_s=gap_s))
    thread = (await a.client.post("/threads", json={})).json()["thread_id"]
    body = {
        "assistant_id": "ducklm",
        "input": {"messages": [{"role": "user", "content": "go"}]},
        "context": {"critic": False, "memory": False},
        "stream_mode": ["values", "messages-tuple"],
    }
    run = (await a.client.post(f"/threads/{thread}/runs", json=body)).json()["run_id"]
    (on_a, first_a), (on_b, first_b) = await asyncio.gather(
        arrivals(a, thread, run), arrivals(b, thread, run)
    )
    if not on_b or not first_b:
        raise SystemExit(f"B streamed nothing of run {run}:\n{b.log_tail()}")
    both = [i for i in on_a if i in on_b and i != "0"]
    lags = [on_b[i] - on_a[i] for i in both]
    rate_a = len(on_a) / (max(on_a.values()) - first_a)
    rate_b = len(on_b) / (max(on_b.values()) - first_b)
    return [statistics.median(lags), percentile_ms(lags, 0.95) / 1000, rate_a, rate_b]


async def bench(settings: Settings, url: str, root: Path, llm: ScriptedLLM) -> None:
    a = await start_worker(settings, url, root, "a")
    b = await start_worker(settings, url, root, "b")
    try:
        # Warm both (B's first request may come after a cold run's end: nothing to follow).
        await asyncio.gather(a.client.get("/info"), b.client.get("/info"))
        await one_run(a, b, llm, 20, 0)
        rows = []
        for name, words, gap in (("paced", PACED, PACED_S), ("burst", BURST, 0.0)):
            for _ in range(ROUNDS):
                lag, p95, rate_a, rate_b = await one_run(a, b, llm, words, gap)
                rows.append([name, lag * 1000, p95 * 1000, rate_a, rate_b, rate_b / rate_a])
        table(
            ["run", "B lag median ms", "B lag p95 ms", "A events/s", "B events/s", "B / A"],
            rows,
        )
    finally:
        await stop_worker(b)
        await stop_worker(a)


def main() -> None:
    url = postgres_url()
    header(
        "An Agent Protocol stream on the running worker (A) and another (B)",
        f"paced: {PACED} tokens every {PACED_S:g} s; burst: {BURST} tokens at once;",
        f"{ROUNDS} runs each; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}",
    )
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as tmp, ScriptedLLM() as llm:
        root = Path(tmp)
        (root / "workspace").mkdir()
        settings = duck_settings(llm.base_url, root)

        async def run() -> None:
            async with fresh_schema(url) as schema_url:
                await bench(settings, schema_url, root, llm)

        asyncio.run(run())


if __name__ == "__main__":
    main()
