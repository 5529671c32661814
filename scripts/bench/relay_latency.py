"""A live event from the worker running a task to a follower on another worker, through
PostgreSQL `LISTEN/NOTIFY` (`ducklm/stores/relay`), against the same-worker stream.

Two relays on the database stand for two workers (their own connections); the
same-worker reference is the hub's `LiveTask` and its follower. Measured, each against
the reference:

1. latency of one event (sent, then awaited by the follower), median and p95;
2. a token stream at `RATE` tokens/s for `PACED` tokens: each token's latency, p95;
3. a burst of `BURST` token events sent at once: events/s until the follower has all.

    DUCK_TEST_DATABASE_URL=postgresql://... .venv/bin/python scripts/bench/relay_latency.py
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable

from _common import postgres_url

from ducklm.server.tasks import LiveTask
from ducklm.stores.relay import open_relay

SINGLE = 300
RATE = 200
PACED = 1000
BURST = 5000
Send = Callable[[int], None]


def _token(n: int) -> dict[str, object]:
    return {"type": "token", "text": f"word{n} ", "task_id": "t", "run_id": "r", "thread_id": "h"}


async def _latencies(
    send: Send, received: Callable[[], Awaitable[int]], gap_s: float, count: int
) -> list[float]:
    """Per-event latency: `send(n)`, then wait until the follower has event `n`."""
    out = []
    for n in range(count):
        start = time.perf_counter()
        send(n)
        while await received() < n + 1:
            pass
        out.append(time.perf_counter() - start)
        if gap_s:
            await asyncio.sleep(gap_s)
    return out


async def _burst(send: Send, received: Callable[[], Awaitable[int]], count: int) -> float:
    start = time.perf_counter()
    for n in range(count):
        send(n)
    while await received() < count:
        pass
    return count / (time.perf_counter() - start)


async def _local(gap_s: float, count: int, burst: bool) -> list[float] | float:
    live = LiveTask("t", "h")
    got = 0
    follower = live.follow()

    async def received() -> int:
        nonlocal got
        await anext(follower)
        got += 1
        return got

    def send(n: int) -> None:
        live.publish(_token(n))

    if burst:
        return await _burst(send, received, count)
    return await _latencies(send, received, gap_s, count)


async def _relayed(url: str, gap_s: float, count: int, burst: bool) -> list[float] | float:
    task_id = str(uuid.uuid4())
    async with (
        open_relay(url) as running,
        open_relay(url) as following,
        following.subscribe(task_id) as inbox,
    ):
        got = 0

        async def received() -> int:
            nonlocal got
            await inbox.get()
            got += 1
            return got

        def send(n: int) -> None:
            running.send(task_id, f"1.{n + 1}", _token(n))

        send(-1)  # the connections open before the clock starts
        await inbox.get()
        if burst:
            return await _burst(send, received, count)
        return await _latencies(send, received, gap_s, count)


def _p(values: list[float], q: float) -> float:
    return sorted(values)[int(q * (len(values) - 1))] * 1000


async def main() -> None:
    url = postgres_url()
    for name, gap, count in (("one event", 0.005, SINGLE), (f"{RATE} tokens/s", 1 / RATE, PACED)):
        local = await _local(gap, count, burst=False)
        relayed = await _relayed(url, gap, count, burst=False)
        assert isinstance(local, list) and isinstance(relayed, list)
        lm, rm = statistics.median(local) * 1000, statistics.median(relayed) * 1000
        lp, rp = _p(local, 0.95), _p(relayed, 0.95)
        print(
            f"{name}: same worker median {lm:.3f} ms p95 {lp:.3f} ms; other worker "
            f"median {rm:.3f} ms p95 {rp:.3f} ms; ratio median {rm / lm:.0f}x p95 {rp / lp:.0f}x"
        )
    local_rate = await _local(0, BURST, burst=True)
    relayed_rate = await _relayed(url, 0, BURST, burst=True)
    assert isinstance(local_rate, float) and isinstance(relayed_rate, float)
    print(
        f"burst of {BURST}: same worker {local_rate:,.0f} events/s; other worker "
        f"{relayed_rate:,.0f} events/s; ratio {relayed_rate / local_rate:.3f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
