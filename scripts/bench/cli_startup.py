"""CLI startup: time from process start to the first output of `ducklm chat "hi"`.

Beside a running `ducklm serve` the CLI sends the turn to the server (`ducklm.cli.remote`)
and loads neither the graph nor torch; with no server it opens DuckLM in-process, which
loads LangGraph, LangChain and the embedding model (MiniLM) first. Measured, each as a
process of its own started the way a person does (the `ducklm` script of this venv):

1. `python -c pass`: the floor, a bare interpreter start.
2. `ducklm chat "hi"` with a server on the same data dir: first byte on stdout or stderr
   (the answer streams there first), and the whole command.
3. The same with no server (its own data dir): the in-process path.
4. `ducklm memory search` both ways (the whole command: it prints at the end).

The model is the scripted server (tests/support/scripted_llm.py, zero latency) on a
thread of this process; `ducklm serve` runs in its own process with its default
embedding model (MiniLM, loaded once when it starts). Critic and memory policy are off:
only the path to the first output is measured. Ratios are against `python -c pass`
measured in the same run; the load average is printed because absolute times move with
other work on the machine.

    .venv/bin/python scripts/bench/cli_startup.py
"""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

from _common import Reply, ScriptedLLM, header, median_ms, reply, table, verdict

from tests.support.langgraph_dev import server_env, spawn_logged, stop, tail

DUCKLM = str(Path(sys.executable).with_name("ducklm"))
REMOTE_REPS = 10
LOCAL_REPS = 3
TARGET_FIRST_S = 1.5
CHAT = [DUCKLM, "chat", "hi", "--no-critic", "--no-memory"]
SEARCH = [DUCKLM, "memory", "search", "where do the ducks live"]
Timing = tuple[float, float]  # (first output, exit) in seconds from the start


def respond(body: dict[str, object]) -> Reply:
    return reply("Quack quack, the pond is calm today.")


def timed(command: list[str], env: dict[str, str], cwd: Path) -> Timing:
    """Run `command`; seconds from start to its first output byte, and to its exit."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    first, output = 0.0, b""
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        sel.register(proc.stderr, selectors.EVENT_READ)
        while sel.get_map():
            for key, _ in sel.select():
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                first = first or time.perf_counter() - start
                output += chunk
    if proc.wait() != 0:
        raise RuntimeError(f"{command!r} exited {proc.returncode}:\n{output.decode()}")
    return first, time.perf_counter() - start


def series(run: Callable[[], Timing], reps: int) -> list[Timing]:
    run()  # warm the file cache, as a person's second command would find it
    return [run() for _ in range(reps)]


def start_server(folder: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """`ducklm serve --port 0` on `env`'s data dir, once it has written `server.json`."""
    log_path = folder / "serve.log"
    process = spawn_logged([DUCKLM, "serve", "--port", "0"], folder, env, log_path)
    deadline = time.monotonic() + 120
    while not (Path(env["DUCK_DATA_DIR"]) / "server.json").exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"ducklm serve did not start:\n{tail(log_path)}")
        time.sleep(0.1)
    return process


def world(root: Path, name: str, llm: ScriptedLLM) -> dict[str, str]:
    """An environment with a data dir of its own under `root`, and one memory in it."""
    (root / name).mkdir()
    env = server_env(
        {
            "DUCK_LLM_BASE_URL": llm.base_url,
            "DUCK_DATA_DIR": str(root / name / "data"),
            "DUCK_WORKSPACE": str(root / "workspace"),
        }
    )
    timed([DUCKLM, "memory", "add", "The ducks live on the north pond"], env, root)
    return env


def main() -> None:
    header(
        "cli startup: ducklm chat / memory search, through a server and in-process",
        "scripted model (zero latency); critic and memory policy off; first output = first",
        "byte on stdout or stderr; each command a process of its own (the venv's `ducklm`).",
        f"{os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.2f}",
    )
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as tmp, ScriptedLLM() as llm:
        root = Path(tmp)
        (root / "workspace").mkdir()
        llm.set_responder(respond)
        remote_env, local_env = world(root, "served", llm), world(root, "local", llm)
        floor = series(lambda: timed([sys.executable, "-c", "pass"], local_env, root), 10)
        server = start_server(root / "served", remote_env)
        try:
            remote = series(lambda: timed(CHAT, remote_env, root), REMOTE_REPS)
            remote_search = series(lambda: timed(SEARCH, remote_env, root), REMOTE_REPS // 2)
        finally:
            stop(server)
        local = series(lambda: timed(CHAT, local_env, root), LOCAL_REPS)
        local_search = series(lambda: timed(SEARCH, local_env, root), LOCAL_REPS)
    report(floor, remote, local, remote_search, local_search)


def report(
    floor: list[Timing],
    remote: list[Timing],
    local: list[Timing],
    remote_search: list[Timing],
    local_search: list[Timing],
) -> None:
    base = median(t for _, t in floor)
    rows = []
    for label, runs in (
        ("python -c pass", floor),
        ("chat, through the server", remote),
        ("chat, in-process", local),
        ("memory search, through the server", remote_search),
        ("memory search, in-process", local_search),
    ):
        first = median_ms([f for f, _ in runs]) if runs is not floor else median_ms([base])
        total = median_ms([t for _, t in runs])
        rows.append([label, len(runs), first, total, total / 1000 / base])
    table(["command", "runs", "first output ms", "whole ms", "x python -c pass"], rows)
    remote_first = median(f for f, _ in remote)
    chat_ratio = median(f for f, _ in local) / remote_first
    search_ratio = median(t for _, t in local_search) / median(t for _, t in remote_search)
    print(f"chat: in-process / through the server, first output: {chat_ratio:.1f}x")
    print(f"memory search: in-process / through the server, whole: {search_ratio:.1f}x")
    verdict("chat first output through the server", remote_first, TARGET_FIRST_S, " s")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
