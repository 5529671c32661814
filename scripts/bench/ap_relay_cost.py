"""What relaying a door run's stream costs the run itself (PostgreSQL), A/B in one run.

On PostgreSQL the worker holding an Agent Protocol run maps, numbers, journals and
`NOTIFY`s each of its events once a follower on another worker asks for them
(`server/agent_protocol/runs/relay.py`). That work shares the running worker's event
loop with the run. Measured on one served app over a fresh schema of
`DUCK_TEST_DATABASE_URL` and the scripted model (a token every `GAP_S`): time to the
first `messages` event and to the stream's end of `POST /threads/{id}/runs/stream`,
rounds interleaved, with nobody following elsewhere (the baseline: what every run pays)
against a run asked for at its start (what a run followed on another worker pays).
A run asked for at its start costs what relaying every run (the first design) cost each
one. Rounds alternate which goes first: the second of a pair ran faster (order alone
read 0.71-0.82x).

    DUCK_TEST_DATABASE_URL=$(scripts/test-postgres.sh) \\
        .venv/bin/python scripts/bench/ap_relay_cost.py
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

from _common import ScriptedLLM, duck_settings, header, median_ms, postgres_url, reply, table

from ducklm.server.agent_protocol.runs.relay import ask
from tests.support.postgres import fresh_schema
from tests.support.server import Served, serve

ROUNDS = 12
WORDS = 120
GAP_S = 0.005


async def one_run(served: Served, asked: bool) -> tuple[float, float]:
    """(first token s, end s) of one streamed run on a new thread; `asked`: relayed."""
    thread = (await served.client.post("/threads", json={})).json()["thread_id"]
    body = {
        "assistant_id": "ducklm",
        "input": {"messages": [{"type": "human", "content": "hi"}]},
        "stream_mode": ["values", "messages-tuple"],
        "context": {"critic": False, "memory": False},
    }
    relay = served.server.config.app.state.hub.relay
    start, first = time.perf_counter(), 0.0
    path = f"/threads/{thread}/runs/stream"
    async with served.client.stream("POST", path, json=body, timeout=120) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if asked and line.startswith("data:") and '"run_id"' in line:
                ask(relay, json.loads(line.removeprefix("data:"))["run_id"])
                asked = False  # once: as a follower on another worker asks
            if line == "event: messages" and not first:
                first = time.perf_counter() - start
    return first, time.perf_counter() - start


async def bench(url: str) -> None:
    with ScriptedLLM() as llm, tempfile.TemporaryDirectory() as folder:
        llm.set_default(reply(" ".join(f"w{n}" for n in range(WORDS)), chunk_delay_s=GAP_S))
        root = Path(folder)
        (root / "workspace").mkdir()
        async with fresh_schema(url) as schema:
            settings = duck_settings(llm.base_url, root).model_copy(update={"database_url": schema})
            async with serve(settings) as served:
                await one_run(served, asked=True)  # warm (the journal's table too)
                results: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
                for n in range(ROUNDS):  # each first in half the rounds: no order's bias
                    for asked in (False, True) if n % 2 else (True, False):
                        results[asked].append(await one_run(served, asked))
    rows = []
    for asked, label in ((False, "nobody follows elsewhere (baseline)"), (True, "asked at start")):
        firsts, ends = zip(*results[asked], strict=True)
        rows.append((label, median_ms(firsts), median_ms(ends)))
    table(["door run on PostgreSQL", "first token p50 ms", "end p50 ms"], rows)
    (_, base_first, base_end), (_, first, end) = rows
    print(f"INFO  first token, asked / baseline, p50: {first / base_first:.2f}x")
    print(f"INFO  end, asked / baseline, p50: {end / base_end:.2f}x")


def main() -> None:
    url = postgres_url()
    header(
        "an Agent Protocol run's cost of relaying its stream, PostgreSQL",
        f"{ROUNDS} interleaved rounds, {WORDS} tokens {GAP_S * 1000:.0f} ms apart",
        f"{os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.2f}",
    )
    asyncio.run(bench(url))
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
