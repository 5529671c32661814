"""Scale across `ducklm serve` workers on one PostgreSQL, and how fast a dead one's run goes on.

Three workers on a fresh schema of `DUCK_TEST_DATABASE_URL` (scripts/test-postgres.sh
prints one), the scripted model answering each call in `MODEL_S`:

1. throughput: `RUNS` turns at a fixed `CONCURRENCY` (SSE clients), spread round-robin
   over the first 1, 2 and 3 workers: runs/s and p95 time to the first event, as ratios
   against one worker;
2. take-over: `KILLS` times, a turn on a worker of its own whose model reply is held,
   the worker killed with SIGKILL, and the time until another worker has finished the
   turn (its lease expires after three 2 s heartbeats; target: under 20 s, median).

    DUCK_TEST_DATABASE_URL=... .venv/bin/python scripts/bench/workers.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import (
    Reply,
    ScriptedLLM,
    duck_settings,
    header,
    percentile_ms,
    postgres_url,
    reply,
    table,
    verdict,
)

from ducklm.config.settings import Settings
from tests.support.postgres import fresh_schema
from tests.support.workers import Worker, start_worker, stop_worker, workers

RUNS = 60
CONCURRENCY = 12
MODEL_S = 0.05
KILLS = 3
HELD = "hold this one"


class Model:
    """Answers every call in `MODEL_S`; a held turn's first call waits until killed."""

    def __init__(self) -> None:
        self.held: set[str] = set()

    def __call__(self, body: dict[str, Any]) -> Reply:
        said = str(body["messages"][-1].get("content"))
        if said.startswith(HELD) and said not in self.held:
            self.held.add(said)
            return reply("too late", delay_s=60)
        return reply("An answer in a few words.", delay_s=MODEL_S)


async def first_event(worker: Worker, n: int) -> float:
    """Seconds from the request to the first SSE event of one turn, read to its end."""
    body = {"message": f"message {n}", "critic": False, "memory": False}
    start, first = time.perf_counter(), 0.0
    async with worker.client.stream("POST", "/v1/chat/stream", json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line.startswith("data:") and not first:
                first = time.perf_counter() - start
    return first


async def throughput(serving: list[Worker]) -> tuple[float, list[float]]:
    """Runs/s and each run's first-event time with `CONCURRENCY` clients on `serving`."""
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(n: int) -> float:
        async with gate:
            return await first_event(serving[n % len(serving)], n)

    start = time.perf_counter()
    firsts = await asyncio.gather(*(one(n) for n in range(RUNS)))
    return RUNS / (time.perf_counter() - start), list(firsts)


async def take_over(victim: Worker, reader: Worker, n: int, model: ScriptedLLM) -> float:
    """Seconds from killing `victim` mid-turn to the turn's end, read through `reader`."""
    asked = len(model.requests)
    body = {"message": f"{HELD} {n}", "conversation_id": f"kill-{n}", "critic": False,
            "memory": False}  # fmt: skip
    turn = asyncio.create_task(victim.client.post("/v1/chat", json=body, timeout=120))
    for _ in range(6000):  # until the victim waits on the model (its turn has started)
        if len(model.requests) > asked:
            break
        await asyncio.sleep(0.05)
    listed = await reader.client.get("/v1/tasks", params={"conversation_id": f"kill-{n}"})
    task_id = listed.json()[0]["task_id"]
    await victim.kill()
    killed = time.perf_counter()
    turn.cancel()
    await asyncio.gather(turn, return_exceptions=True)
    for _ in range(1200):  # two minutes at most
        if (await reader.client.get(f"/v1/tasks/{task_id}")).json()["status"] == "completed":
            return time.perf_counter() - killed
        await asyncio.sleep(0.1)
    raise SystemExit(f"the run of {victim.name} was not taken over:\n{victim.log_tail()}")


async def bench(settings: Settings, url: str, root: Path, model: ScriptedLLM) -> None:
    rows, base = [], 0.0
    async with workers(settings, url, root, 3) as three:
        await asyncio.gather(*(first_event(w, -1) for w in three))  # warm each one
        for count in (1, 2, 3):
            rate, firsts = await throughput(three[:count])
            base = base or rate
            rows.append([f"{count} worker(s)", rate, rate / base, percentile_ms(firsts, 0.95)])
        table(["workers", "runs/s", "x 1 worker", "first event p95 ms"], rows)
        kills = []
        for n in range(KILLS):
            victim = await start_worker(settings, url, root, f"victim{n}")
            try:
                kills.append(await take_over(victim, three[n % 3], n, model))
            finally:
                await stop_worker(victim)
    median = statistics.median(kills)
    print(f"death to the run's end elsewhere: {', '.join(f'{k:.1f}' for k in kills)} s")
    verdict("take-over median", median, 20.0, " s")


def main() -> None:
    url = postgres_url()
    header(
        "Workers on one PostgreSQL: scale and take-over",
        f"{RUNS} turns at {CONCURRENCY} concurrent clients; model answers in {MODEL_S:g} s;",
        f"{KILLS} kills; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}",
    )
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as tmp, ScriptedLLM() as llm:
        llm.set_responder(Model())
        root = Path(tmp)
        (root / "workspace").mkdir()
        settings = duck_settings(llm.base_url, root)

        async def run() -> None:
            async with fresh_schema(url) as schema_url:
                await bench(settings, schema_url, root, llm)

        asyncio.run(run())


if __name__ == "__main__":
    main()
