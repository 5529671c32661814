"""What watching costs: first token with tracing off and on, and the metrics per turn.

Three `ducklm serve` processes on the same scripted model server (zero latency, which
also serves the embeddings), interleaved round by round so drift hits all alike:

(a) the raw client streaming the scripted server (the floor);
(b) DuckLM with no OTLP endpoint: tracing off, nothing of it imported (the baseline);
(c) DuckLM tracing to an OTLP/HTTP receiver on loopback (`OTEL_EXPORTER_OTLP_ENDPOINT`),
    prompts and outputs hidden (the default);
(d) the same with `DUCK_TRACE_CONTENT=true` (prompts and outputs in the spans).

Each turn is a one-tool turn (a model call, `file_read`, a second model call streaming
the answer), timed to its first `token` event and to its `done`. Ratios are against (b)
in the same run. The receiver runs on a thread of this process and decodes nothing.

The metrics observer (`RunMetrics`) is on in every server (it has no switch): its cost
is measured apart, in this process, as the time to count the events of one such turn.

    .venv/bin/python scripts/bench/tracing_cost.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from _common import ScriptedLLM, header, median_ms, p90_ms, table
from server_latency import (
    NOTES,
    SETTLE_S,
    TOKEN,
    TOOL_Q,
    Stream,
    duck_token,
    ducklm_serve,
    post_stream,
    raw_token,
    respond,
    roomy_backlog,
)

from ducklm.server.observability.metrics import RunMetrics
from tests.support.otlp_receiver import otlp_receiver

WARMUP = 3
REPS = 30
OBSERVER_REPS = 2000
BASE = "(b) tracing off"
NAMES = {
    "raw": "(a) raw client -> scripted server",
    "off": BASE,
    "on": "(c) tracing on, content hidden",
    "content": "(d) tracing on, content shown",
}


@dataclass(frozen=True)
class Targets:
    """The scripted server and the three DuckLM servers, by key of `NAMES`."""

    llm: str
    duck: dict[str, str]


async def turn(client: httpx.AsyncClient, targets: Targets, key: str, text: str) -> Stream:
    """One turn of `key`'s server (or the raw client), timed to its first token and end."""
    if key == "raw":
        body: dict[str, Any] = {
            "model": "scripted",
            "stream": True,
            "messages": [{"role": "user", "content": text}],
        }
        return await post_stream(client, f"{targets.llm}/chat/completions", body, raw_token)
    body = {"message": f"{TOOL_Q} {text}", "critic": False, "memory": False}
    return await post_stream(client, f"{targets.duck[key]}/v1/chat/stream", body, duck_token)


async def rounds(client: httpx.AsyncClient, targets: Targets) -> dict[str, list[Stream]]:
    """`WARMUP` untimed turns each, then `REPS` interleaved rounds, a new text each."""
    for key in NAMES:
        for n in range(WARMUP):
            await turn(client, targets, key, f"(warm-up {n})")
    found: dict[str, list[Stream]] = {key: [] for key in NAMES}
    for index in range(REPS):
        for key in NAMES:
            await asyncio.sleep(SETTLE_S)
            found[key].append(await turn(client, targets, key, f"(round {index})"))
    return found


def report(found: dict[str, list[Stream]]) -> None:
    firsts = {key: [s.first_s for s in runs] for key, runs in found.items()}
    ends = {key: [s.last_s for s in runs] for key, runs in found.items()}
    base_first, base_end = median_ms(firsts["off"]), median_ms(ends["off"])
    rows = [
        (
            NAMES[key],
            len(firsts[key]),
            median_ms(firsts[key]),
            p90_ms(firsts[key]),
            median_ms(firsts[key]) / base_first,
            median_ms(ends[key]) / base_end,
        )
        for key in NAMES
    ]
    columns = ["server", "runs", "first token p50 ms", "p90 ms", "first / (b)", "last token / (b)"]
    table(columns, rows)
    added = median_ms(firsts["on"]) - base_first
    print(f"tracing adds {added:.1f} ms to the first token's p50 ({added / base_first:+.1%})")


def observer_cost(events: list[dict[str, Any]]) -> None:
    """Time counting one turn's events (and its steps) with a fresh `RunMetrics`."""
    metrics = RunMetrics()
    steps = ["context", "route", "action", "tool", "action"]
    start = time.perf_counter()
    for n in range(OBSERVER_REPS):
        run_id = f"run-{n}"
        for item in events:
            metrics.saw({**item, "run_id": run_id})
        for node in steps:
            metrics.stepped(run_id, [node])
    per_turn_us = (time.perf_counter() - start) / OBSERVER_REPS * 1e6
    print(
        f"metrics: counting one turn's {len(events)} events and {len(steps)} steps takes "
        f"{per_turn_us:.1f} us (the event dicts copied included), {OBSERVER_REPS} turns"
    )


@contextmanager
def servers(root: Path) -> Iterator[Targets]:
    """The scripted model server, the receiver and the three DuckLM servers."""
    roomy_backlog()
    with ExitStack() as stack:
        llm = stack.enter_context(ScriptedLLM())
        llm.set_responder(respond)
        receiver = stack.enter_context(otlp_receiver())
        (root / "workspace").mkdir()
        (root / "workspace" / "notes.md").write_text(NOTES, encoding="utf-8")
        common = {
            "DUCK_LLM_BASE_URL": llm.base_url,
            "DUCK_EMBEDDINGS_URL": llm.base_url,
            "DUCK_WORKSPACE": str(root / "workspace"),
            "DUCK_MODEL_RETRY_INITIAL_INTERVAL": "0.01",
            "DUCK_API_TOKEN": TOKEN,
        }
        traced = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}
        extra = {"off": {}, "on": traced, "content": {**traced, "DUCK_TRACE_CONTENT": "true"}}
        urls = {}
        for key, env in extra.items():
            (root / key).mkdir()
            full = {**common, **env, "DUCK_DATA_DIR": str(root / key / "data")}
            urls[key], _ = stack.enter_context(ducklm_serve(root / key, full))
        yield Targets(llm.base_url, urls)
        print(f"spans received: {len(receiver.received())}")


async def bench(targets: Targets) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    client = await asyncio.to_thread(httpx.AsyncClient, headers=headers, timeout=120)
    async with client:
        print(f"-- first token of a one-tool turn ({REPS} interleaved rounds) --")
        found = await rounds(client, targets)
        report(found)
        print("\n-- the metrics observer --")
        events = [data for _, data in found["off"][-1].events]
        observer_cost(events)


def main() -> None:
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        del os.environ[name]  # (b) must run with tracing off, whatever this shell has
    header(
        "tracing cost: first token with OpenTelemetry off and on, metrics per turn",
        "scripted model server with zero latency; critic and memory off; one-tool turns;",
        "each ducklm serve in its own process; OTLP receiver on a thread of this one.",
        f"{os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.2f}",
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as tmp, servers(Path(tmp)) as up:
        print(f"servers up in {time.perf_counter() - started:.1f} s\n")
        asyncio.run(bench(up))
    load = os.getloadavg()[0]
    print(f"\ntotal {time.perf_counter() - started:.1f} s, load average at the end {load:.2f}")


if __name__ == "__main__":
    main()
