"""Generation speed of the portable llama.cpp build against a native one, in the same run.

`make install` builds llama-cpp-python portably (scripts/install-llama.sh): its CPU code
once per x86-64 level, the best one chosen at run time (ducklm/models/local/dispatch.py), so
that the bundled model runs on any x86-64 CPU; a build tuned to the build machine
(GGML_NATIVE) died with SIGILL on another. This measures what portability costs. Both wheels come
from the script's flag-keyed cache (the native one is built here the first time, about
10 minutes); each runs llama-cpp-python's server on the bundled SmolLM2 with one thread,
and the same requests are sent to both, interleaved. The rate is the server log's own
"eval time" for each request (generation only), and the prompt's "prompt eval time".

Baseline: the native build, measured in the same run. Reported, not judged: portability
is the requirement, the ratio is its price (README: how to get the native build).

    .venv/bin/python scripts/bench/llama_build.py
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

import httpx
from _common import REPO_ROOT, header, table

from ducklm.models.local import server as llama

BUILDS = ("portable", "native")
REPS = 5
PROMPTS = (
    "Tell me a long story about a duck who learns to swim in a big lake.",
    "Explain in detail how a bicycle works, part by part.",
)
BODY = {"model": "local", "temperature": 0.0, "max_tokens": 160, "seed": 7}
TIMING = re.compile(r"(prompt eval|\beval) time =\s+([\d.]+) ms /\s+(\d+) (?:runs|tokens)")


def wheel(build: str) -> Path:
    """The cached wheel of `build`, built by scripts/install-llama.sh when missing."""
    script = REPO_ROOT / "scripts" / "install-llama.sh"
    env = os.environ | {"LLAMA_BUILD": build}
    out = subprocess.run(
        [str(script), "--wheel-only", sys.executable], env=env, check=True, capture_output=True
    )
    return Path(out.stdout.decode().strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


class Server:
    """llama-cpp-python's server from one wheel, unpacked into a folder of its own."""

    def __init__(self, build: str, root: Path, model: Path) -> None:
        self.build = build
        target = root / build
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
             str(target), str(wheel(build))],
            check=True,
        )  # fmt: skip
        self.port = free_port()
        self.log_path = root / f"{build}.log"
        # As `ducklm llama start` runs it: the launcher picks the CPU variant. -P instead of
        # -I: PYTHONPATH must reach the unpacked wheel.
        argv = [sys.executable, "-P", llama.DISPATCH_SCRIPT, "--model", str(model), "--host",
                "127.0.0.1", "--port", str(self.port), "--n_ctx", "2048", "--n_threads", "1",
                "--model_alias", "local"]  # fmt: skip
        env = os.environ | {"PYTHONPATH": str(target)}
        self.log = self.log_path.open("w")
        self.proc = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.offset = 0

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.build} server exited with {self.proc.returncode}")
            try:
                httpx.get(f"http://127.0.0.1:{self.port}/v1/models", timeout=2)
                return
            except httpx.HTTPError:
                time.sleep(0.3)
        raise SystemExit(f"{self.build} server did not answer in 120 s")

    def turn(self, prompt: str) -> tuple[float, float]:
        """One completion: (generation tokens/s, prompt tokens/s) from the server's log."""
        body = {**BODY, "messages": [{"role": "user", "content": prompt}]}
        url = f"http://127.0.0.1:{self.port}/v1/chat/completions"
        httpx.post(url, json=body, timeout=600).raise_for_status()
        time.sleep(0.2)  # the timings line is printed after the response
        text = self.log_path.read_text(errors="replace")[self.offset :]
        self.offset += len(text)
        found = TIMING.findall(text)
        rates = {kind: int(n) / (float(ms) / 1000) for kind, ms, n in found if float(ms) > 0}
        return rates.get("eval", 0.0), rates.get("prompt eval", 0.0)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()


def main() -> None:
    model = llama.bundled_model()
    if model is None:
        print("SKIP  the local extra is not installed: pip install -e '.[local]'")
        return
    header(
        "llama.cpp build: portable (CPU variant chosen at run time) vs native (this CPU)",
        f"SmolLM2-135M Q4_1, 1 thread, {len(PROMPTS)} prompts x {REPS} interleaved rounds, "
        f"temperature 0, {BODY['max_tokens']} tokens at most",
        f"{os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.2f}",
    )
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as tmp:
        servers = [Server(build, Path(tmp), model) for build in BUILDS]
        try:
            for server in servers:
                server.wait_ready()
                server.turn(PROMPTS[0])  # warm-up: the first request maps the weights
            gen: dict[str, list[float]] = {b: [] for b in BUILDS}
            pp: dict[str, list[float]] = {b: [] for b in BUILDS}
            for rep in range(REPS):
                for prompt in PROMPTS:
                    for server in servers:
                        # A new first line each round: the server reuses a cached prompt
                        # prefix, which would leave no prompt processing to measure.
                        g, p = server.turn(f"Request {rep + 1}. {prompt}")
                        gen[server.build].append(g)
                        pp[server.build].append(p)
        finally:
            for server in servers:
                server.stop()
    rows = [(b, median(gen[b]), median(pp[b])) for b in BUILDS]
    table(["build", "generation tokens/s p50", "prompt tokens/s p50"], rows)
    ratio = median(gen["portable"]) / median(gen["native"])
    prompt_ratio = median(pp["portable"]) / median(pp["native"])
    print(f"\nportable / native: generation {ratio:.2f}x, prompt {prompt_ratio:.2f}x")


if __name__ == "__main__":
    main()
