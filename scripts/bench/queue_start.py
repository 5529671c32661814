"""What the run queue adds between `POST /threads/{id}/runs` and the run's start.

Two `ducklm serve` workers on a fresh schema of `DUCK_TEST_DATABASE_URL`
(scripts/test-postgres.sh prints one) and the scripted model (answers at once). Each
round uses new threads and measures, from the moment the request is sent to the run's
`started_at` in DuckLM's `runs` table (one machine, one clock):

1. direct: `POST /threads/{id}/runs/wait`, a run with a waiting client, started at once
   in the request, the path every background run took before the queue;
2. queue, here: `POST /threads/{id}/runs` on worker B, which has room: its row is taken
   by B as it is written and B's drainer starts it (woken at once);
3. queue, elsewhere: the same on worker A while A is full (`DUCK_WORKER_RUNS=1`, its one
   run held by the model): B's drainer finds the row by its poll and starts it.

Rounds interleave the three, so load on the machine touches each alike; printed: the
median and p90 of each, and the queue's medians as a ratio of the direct one.

    DUCK_TEST_DATABASE_URL=... .venv/bin/python scripts/bench/queue_start.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from _common import (
    ScriptedLLM,
    duck_settings,
    header,
    median_ms,
    p90_ms,
    postgres_url,
    reply,
    table,
)

from ducklm.config.settings import Settings
from tests.support.postgres import fresh_schema
from tests.support.workers import Worker, start_worker, stop_worker

ROUNDS = 20
WARMUP = 2
HOLD = "hold A"
QUIET = {"critic": False, "memory": False}


def body(text: str) -> dict[str, Any]:
    """A run request with one human message."""
    return {
        "assistant_id": "ducklm",
        "input": {"messages": [{"role": "user", "content": text}]},
        "context": QUIET,
    }


async def started_at(url: str, thread: str) -> float:
    """When the thread's first run started (polled until it has one)."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for _ in range(600):
            cursor = await conn.execute(
                "SELECT MIN(started_at) FROM runs WHERE thread_id = %s AND kind = 'turn'",
                (thread,),
            )
            row = await cursor.fetchone()
            if row and row[0] is not None:
                return float(row[0])
            await asyncio.sleep(0.05)
    raise SystemExit(f"no run of thread {thread} started")


async def timed(worker: Worker, url: str, route: str, text: str) -> float:
    """Seconds from sending the request to the run's start."""
    thread = (await worker.client.post("/threads", json={})).json()["thread_id"]
    sent = time.time()
    answer = await worker.client.post(f"/threads/{thread}/{route}", json=body(text))
    assert answer.status_code == 200, answer.text
    return await started_at(url, thread) - sent


async def bench(settings: Settings, url: str, root: Path, llm: ScriptedLLM) -> None:
    a = await start_worker(settings, url, root, "a", DUCK_WORKER_RUNS="1")
    b = await start_worker(settings, url, root, "b")
    try:
        held_thread = (await a.client.post("/threads", json={})).json()["thread_id"]
        await a.client.post(f"/threads/{held_thread}/runs", json=body(HOLD))
        times: dict[str, list[float]] = {"direct": [], "queue, here": [], "queue, elsewhere": []}
        for n in range(WARMUP + ROUNDS):
            found = [
                await timed(b, url, "runs/wait", f"direct {n}"),
                await timed(b, url, "runs", f"here {n}"),
                await timed(a, url, "runs", f"elsewhere {n}"),
            ]
            if n >= WARMUP:
                for name, seconds in zip(times, found, strict=True):
                    times[name].append(seconds)
        direct = median_ms(times["direct"])
        rows = [
            (name, f"{median_ms(s):.1f}", f"{p90_ms(s):.1f}", f"{median_ms(s) / direct:.2f}")
            for name, s in times.items()
        ]
        table(("path", "median ms", "p90 ms", "x direct"), rows)
    finally:
        await stop_worker(b)
        await stop_worker(a)


def main() -> None:
    url = postgres_url()
    header(
        "From POST /threads/{id}/runs to the run's start: direct, and through the queue",
        f"{ROUNDS} rounds after {WARMUP} warm-up; {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.2f}",
    )
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as tmp, ScriptedLLM() as llm:
        root = Path(tmp)
        (root / "workspace").mkdir()
        settings = duck_settings(llm.base_url, root)
        # Every answer at once, but A's one run, held for the whole bench.
        llm.set_responder(
            lambda request: reply("ok", delay_s=600 if HOLD in str(request["messages"]) else 0)
        )

        async def run() -> None:
            async with fresh_schema(url) as schema_url:
                await bench(settings, schema_url, root, llm)

        asyncio.run(run())
    print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
