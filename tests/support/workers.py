"""Several `ducklm serve` workers on one PostgreSQL database, as separate processes.

Each worker has its own data dir (log, embedded parts) and the same token, database,
workspace and scripted model: the topology of docs/deployment.md on one machine. A
worker can be killed with SIGKILL, to test that its runs go on elsewhere.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from ducklm.config.settings import Settings, load_settings
from tests.support.cli import cli_env
from tests.support.langgraph_dev import spawn_logged, stop, tail

TOKEN = "workers-token-0123456789abcdef"
_ANNOUNCED = re.compile(r"web chat at (http://\S+)/")
START_TIMEOUT_S = 300.0  # three workers importing at once on a busy machine


@dataclass
class Worker:
    """One `ducklm serve` process: its name, its process, its log and a client with the token."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    client: httpx.AsyncClient

    @property
    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.process.poll() is None

    async def kill(self) -> None:
        """SIGKILL the worker and everything it started: no cleanup of any kind runs."""
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        await asyncio.to_thread(self.process.wait, 10)

    def log_tail(self) -> str:
        """The end of the worker's log (for a failing assertion's message)."""
        return tail(self.log)


def shared_settings_under(root: Path, model_url: str, **overrides: Any) -> Settings:
    """The settings every worker of a topology shares: the scripted model, one workspace."""
    (root / "workspace").mkdir()
    return load_settings(
        env_file=None,
        llm_base_url=model_url,
        data_dir=root / "data",
        workspace=root / "workspace",
        **overrides,
    )


def worker_env(settings: Settings, url: str, data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of one worker: `settings`' model and workspace, on database `url`."""
    return {
        **cli_env(settings),
        "DUCK_DATA_DIR": str(data_dir),
        "DUCK_DATABASE_URL": url,
        "DUCK_API_TOKEN": TOKEN,
        **extra,
    }


@asynccontextmanager
async def workers(
    settings: Settings, url: str, folder: Path, count: int, **extra: str
) -> AsyncIterator[list[Worker]]:
    """`count` workers on database `url`, started side by side; stopped at the end.

    `extra`: more `DUCK_*` variables for every worker.
    """
    async with AsyncExitStack() as stack:
        started = await asyncio.gather(
            *(_start(settings, url, folder, f"w{n}", extra) for n in range(count))
        )
        for worker in started:
            stack.push_async_callback(_stop, worker)
        yield list(started)


@asynccontextmanager
async def workers_in_turn(
    settings: Settings, url: str, folder: Path, envs: dict[str, dict[str, str]]
) -> AsyncIterator[list[Worker]]:
    """A worker per name of `envs` (its extra `DUCK_*` variables), started one after the
    other; stopped at the end.

    One after the other where a module's cases must not wait on the workers' setup: side
    by side, the second's checkpoint setup can wait on the first's (a `CREATE INDEX
    CONCURRENTLY` waits for every open transaction, one of which waits for the setup lock).
    """
    async with AsyncExitStack() as stack:
        started = []
        for name, extra in envs.items():
            worker = await _start(settings, url, folder, name, extra)
            stack.push_async_callback(_stop, worker)
            started.append(worker)
        yield started


async def start_worker(
    settings: Settings, url: str, folder: Path, name: str, **extra: str
) -> Worker:
    """One more worker (stop it with `stop_worker`)."""
    return await _start(settings, url, folder, name, extra)


async def stop_worker(worker: Worker) -> None:
    """SIGTERM the worker (SIGKILL if it lingers) and close its client."""
    await _stop(worker)


async def _start(
    settings: Settings, url: str, folder: Path, name: str, extra: dict[str, str]
) -> Worker:
    env = worker_env(settings, url, folder / f"data-{name}", **extra)
    log = folder / f"serve-{name}.log"
    command = [sys.executable, "-m", "ducklm.cli.main", "serve", "--port", "0"]
    process = await asyncio.to_thread(spawn_logged, command, folder, env, log)
    try:
        base = await asyncio.to_thread(announced_url, process, log)
    except BaseException:
        await asyncio.to_thread(stop, process)
        raise
    client = await asyncio.to_thread(
        httpx.AsyncClient, base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
    )
    return Worker(name, process, log, client)


async def _stop(worker: Worker) -> None:
    await worker.client.aclose()
    await asyncio.to_thread(stop, worker.process)


def announced_url(
    process: subprocess.Popen[bytes], log: Path, timeout_s: float = START_TIMEOUT_S
) -> str:
    """The base URL `ducklm serve` printed in `log`; fails if it exits or is slow to start."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if found := _ANNOUNCED.search(log.read_text(errors="replace")):
            return found.group(1)
        if process.poll() is not None:
            raise AssertionError(f"ducklm serve exited {process.returncode}:\n{tail(log)}")
        time.sleep(0.1)
    raise AssertionError(f"ducklm serve did not start in {timeout_s}s:\n{tail(log)}")
