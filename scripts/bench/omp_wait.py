"""The embedder's OpenMP wait policy, A/B: spinning (libgomp's default) against passive.

torch runs MiniLM on an OpenMP thread team. By default a team's threads spin between
parallel regions; when another process (llama.cpp answering, a build, a second DuckLM)
takes the cores, a spinning thread holds a core its teammate needs at the next barrier,
and each of the forward pass's regions waits a time slice. `OMP_WAIT_POLICY=PASSIVE`
makes them sleep instead. Each variant runs in a fresh process (libgomp reads the policy
when torch loads), on the machine as it is and beside BUSY processes spinning on every
core (the stand-in for a model server's generation), rounds interleaved.

    .venv/bin/python scripts/bench/omp_wait.py
"""

from __future__ import annotations

import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from _common import header, table

ROUNDS = 3
QUERIES = 20
BATCHES = 3
MODEL = "all-MiniLM-L6-v2"
POLICIES = {"spinning (default)": None, "passive": "PASSIVE"}

CHILD = """
import json, os, sys, time
sys.path.insert(0, os.getcwd())
from ducklm.memory.embeddings import _encode
_encode(MODEL, ["warm up"])
texts = [f"memory {i}: the pond had {i % 7} ducks and a heron on day {i}" for i in range(64)]
queries, batches = [], []
for i in range(QUERIES):
    start = time.perf_counter()
    _encode(MODEL, [f"where did duck {i} swim on {sys.argv[1]}?"])
    queries.append(time.perf_counter() - start)
for i in range(BATCHES):
    start = time.perf_counter()
    _encode(MODEL, [f"{t} ({sys.argv[1]} {i})" for t in texts])
    batches.append(time.perf_counter() - start)
print(json.dumps({"queries": queries, "batches": batches}))
"""


def spin(stop: float) -> None:
    """Keep one core busy until `stop` (time.monotonic)."""
    while time.monotonic() < stop:
        pass


@contextmanager
def busy(cores: int) -> Iterator[None]:
    """`cores` processes spinning while the block runs."""
    stop = time.monotonic() + 600
    procs = [multiprocessing.Process(target=spin, args=(stop,)) for _ in range(cores)]
    for p in procs:
        p.start()
    try:
        yield
    finally:
        for p in procs:
            p.terminate()
            p.join()


def measure(policy: str | None, tag: str) -> dict[str, list[float]]:
    """One child process's query and batch encode times."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("OMP_WAIT_POLICY", None)
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    code = (
        CHILD.replace("MODEL", repr(MODEL))
        .replace("QUERIES", str(QUERIES))
        .replace("BATCHES", str(BATCHES))
    )
    out = subprocess.run(
        [sys.executable, "-c", code, tag], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    cores = os.cpu_count() or 1
    header(
        "the embedder's OpenMP wait policy, spinning against passive",
        f"{ROUNDS} interleaved rounds a variant, {QUERIES} query encodes and {BATCHES} "
        "64-text encodes each",
        f"'beside' = {cores} busy processes spinning on the {cores} CPUs",
        f"load average at the start {os.getloadavg()[0]:.2f}",
    )
    got: dict[tuple[str, str], dict[str, list[float]]] = {}
    for n in range(ROUNDS):
        for where in ("as it is", "beside"):
            for name, policy in POLICIES.items():
                if where == "beside":
                    with busy(cores):
                        one = measure(policy, f"b{n}")
                else:
                    one = measure(policy, f"a{n}")
                slot = got.setdefault((where, name), {"queries": [], "batches": []})
                for key in slot:
                    slot[key].extend(one[key])
    rows = []
    for (where, name), t in got.items():
        base = got[where, "spinning (default)"]
        q = statistics.median(t["queries"]) * 1000
        b = statistics.median(t["batches"]) * 1000
        rows.append([
            where, name, f"{q:.1f}", f"{q / (statistics.median(base['queries']) * 1000):.2f}",
            f"{b:.0f}", f"{64 / b * 1000:.0f}",
            f"{statistics.median(base['batches']) / statistics.median(t['batches']):.2f}",
        ])  # fmt: skip
    table(
        ["machine", "policy", "query p50 ms", "/ spinning", "64 texts ms", "texts/s", "x spinning"],
        rows,
    )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
