"""Resident memory of `ducklm serve` beside `langgraph dev`'s: at rest, and after N runs.

Each server runs DuckLM's graph on the scripted model server (critic and memory policy
off in every run, as the conformance suite runs them), one server at a time, and is
measured from outside: the resident set (VmRSS, with its anonymous and file-backed
parts) of its process and every process under it, read from `/proc`. Points:

1. started: the server answers (`ducklm serve` loads its embedding model at start:
   measured once `/health` says it is ready);
2. after the first run (a thread created, one run waited for): everything a run needs
   is loaded, on both servers (`langgraph dev` loads the graph and the model then);
3. after N runs, each on a new thread, and after N more (does it keep growing?).

The servers: `ducklm serve` as shipped (the in-process MiniLM); `ducklm serve` with
`DUCK_EMBEDDINGS_URL` (the scripted server's embeddings: DuckLM without torch); and
`langgraph dev` serving the repository's `langgraph.json` with the same in-process MiniLM.

Where a resting server's memory goes, in one process, step by step: `--breakdown`.

    .venv/bin/python scripts/bench/serve_rss.py [--runs 50] [--breakdown]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _common import Reply, ScriptedLLM, header, reply, table
from server_latency import ducklm_serve

from tests.support.langgraph_dev import REPO_ROOT, langgraph_dev, write_config

TOKEN = "bench-token-0123456789abcdef"
QUIET = {"critic": False, "memory": False}
READY_S = 600.0
BREAKDOWN = r"""
import sys, time
def rss():
    fields = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return [int(fields[k].split()[0]) // 1024 for k in ("VmRSS", "RssAnon", "RssFile")]
def show(step):
    print(json.dumps([step, *rss()]), flush=True)
import json
show("the interpreter")
import ducklm.server.app
show("import ducklm.server.app (DuckLM and its libraries)")
import torch
show("import torch")
from ducklm.memory.embeddings import _encode
_encode("all-MiniLM-L6-v2", ["warm up"])
show("MiniLM loaded and traced (no sentence-transformers)")
import sentence_transformers
show("(import sentence-transformers, as before: not loaded now)")
"""


def respond(body: dict[str, Any]) -> Reply:
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
    if schema == "Critique":
        return reply(json.dumps({"score": 0.8, "summary": "fine"}))
    if schema == "MemoryProposal":
        return reply(json.dumps({"should_store": False}))
    return reply("An answer in a few words.")


def tree_rss(pid: int) -> tuple[int, int, int]:
    """MiB resident (all, anonymous, file-backed) of `pid` and its descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    total = [0, 0, 0]
    todo = [pid]
    while todo:
        current = todo.pop()
        todo.extend(children.get(current, []))
        try:
            lines = Path(f"/proc/{current}/status").read_text().splitlines()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in lines if ":" in line)
        for i, key in enumerate(("VmRSS", "RssAnon", "RssFile")):
            total[i] += int(fields.get(key, "0 kB").split()[0]) // 1024
    return total[0], total[1], total[2]


def call(url: str, path: str, body: dict[str, Any] | None, headers: dict[str, str]) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"{url}{path}",
        data=data,
        headers={**headers, "Content-Type": "application/json"},
        method="GET" if body is None else "POST",
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read() or b"null")


def one_run(url: str, headers: dict[str, str], n: int) -> None:
    thread = call(url, "/threads", {}, headers)["thread_id"]
    body = {
        "assistant_id": "ducklm",
        "input": {"messages": [{"role": "user", "content": f"hello number {n}"}]},
        "context": QUIET,
    }
    values = call(url, f"/threads/{thread}/runs/wait", body, headers)
    if not isinstance(values, dict) or "__error__" in values:
        raise RuntimeError(f"run {n} failed: {values}")


def wait_ready(url: str) -> None:
    """Until `ducklm serve`'s embedding model has loaded (or failed to)."""
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        state = call(url, "/health", None, {})["checks"]["embeddings"]
        if state == "ready" or state.startswith("failed"):
            return
        time.sleep(0.5)
    raise RuntimeError(f"the embedding model did not load in {READY_S:.0f} s")


def measure(
    name: str, url: str, pid: int, headers: dict[str, str], runs: int
) -> list[list[object]]:
    rows: list[list[object]] = []

    def point(label: str) -> None:
        time.sleep(2.0)  # let the run's background work (reviews, writes) settle
        rows.append([name, label, *tree_rss(pid)])
        print(f"  {name}: {label}: {rows[-1][2]} MiB", flush=True)

    point("started")
    one_run(url, headers, 0)
    point("after 1 run")
    for n in range(1, runs + 1):
        one_run(url, headers, n)
    point(f"after {runs} runs")
    for n in range(runs + 1, 2 * runs + 1):
        one_run(url, headers, n)
    point(f"after {2 * runs} runs")
    return rows


@contextmanager
def duck(root: Path, env: dict[str, str]) -> Iterator[tuple[str, int]]:
    root.mkdir()
    env = {**env, "DUCK_DATA_DIR": str(root / "data"), "DUCK_API_TOKEN": TOKEN}
    with ducklm_serve(root, env) as (url, _log):
        yield url, _server_pid(url)


def _server_pid(url: str) -> int:
    """The pid listening on `url`'s port (from /proc/net/tcp and the fds)."""
    port = int(url.rsplit(":", 1)[1].split("/", maxsplit=1)[0])
    inodes = set()
    for table_path in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table_path).read_text().splitlines()[1:]:
            parts = line.split()
            if int(parts[1].rsplit(":", 1)[1], 16) == port and parts[3] == "0A":
                inodes.add(parts[9])
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                if os.readlink(fd) in {f"socket:[{i}]" for i in inodes}:
                    return int(entry.name)
        except OSError:
            continue
    raise RuntimeError(f"nothing listens on {url}")


def breakdown() -> None:
    print("\nwhere a resting server's memory goes (one process, step by step, MiB):")
    done = subprocess.run(
        [sys.executable, "-c", BREAKDOWN],
        cwd=REPO_ROOT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
    table(("step", "VmRSS", "anon", "file"), rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--breakdown", action="store_true")
    args = parser.parse_args()
    header(
        "resident memory: ducklm serve and langgraph dev, at rest and after runs",
        "scripted model server, critic and memory policy off; one server at a time;",
        "VmRSS of the server's process tree (anonymous + file-backed), MiB.",
        f"{os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.2f}",
    )
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix="ducklm-rss-") as tmp, ScriptedLLM() as llm:
        llm.set_responder(respond)
        llm.props = {"default_generation_settings": {"n_ctx": 65536}}
        root = Path(tmp)
        (root / "workspace").mkdir()
        env = {
            "DUCK_LLM_BASE_URL": llm.base_url,
            "DUCK_WORKSPACE": str(root / "workspace"),
            "DUCK_MODEL_RETRY_INITIAL_INTERVAL": "0.01",
        }
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with duck(root / "serve", env) as (url, pid):
            wait_ready(url)
            rows += measure("ducklm serve", url, pid, headers, args.runs)
        remote = {**env, "DUCK_EMBEDDINGS_URL": llm.base_url}
        with duck(root / "serve-remote", remote) as (url, pid):
            wait_ready(url)
            rows += measure("ducklm serve, remote embeddings", url, pid, headers, args.runs)
        config = write_config(REPO_ROOT / "langgraph.json", root / "lg")
        lg_env = {**env, "DUCK_DATA_DIR": str(root / "lg" / "data")}
        with langgraph_dev(config, env=lg_env) as server:
            rows += measure("langgraph dev", server.url, server.process.pid, {}, args.runs)
    print()
    table(("server", "when", "VmRSS", "anon", "file"), rows)
    if args.breakdown:
        breakdown()


if __name__ == "__main__":
    main()
