"""Running the `ducklm` command as a separate process, the way a person does."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ducklm.config.settings import Settings
from tests.support import embedding_service
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.zygote import ForkedProcess, Zygote


@dataclass
class CliResult:
    """What one `ducklm` process printed and how it exited."""

    code: int
    stdout: str
    stderr: str

    def events(self) -> list[dict[str, Any]]:
        """The JSON events of a `--json` run."""
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def cli_env(settings: Settings, *, local_embeddings: bool = False) -> dict[str, str]:
    """An environment that points a `ducklm` process at the same files as `settings`.

    The process embeds through the test process's shared embedding service (the same
    model, loaded once: tests/support/embedding_service.py) unless `local_embeddings`,
    for the tests that prove the in-process load itself.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUCK_")}
    env.update(
        DUCK_LLM_BASE_URL=settings.llm_base_url or "",
        DUCK_DATA_DIR=str(settings.data_dir),
        DUCK_WORKSPACE=str(settings.workspace),
        DUCK_MODEL_RETRY_INITIAL_INTERVAL=str(settings.model_retry_initial_interval),
    )
    if settings.embeddings_url:
        env["DUCK_EMBEDDINGS_URL"] = settings.embeddings_url
    elif not local_embeddings:
        env["DUCK_EMBEDDINGS_URL"] = embedding_service.url()
    if settings.skills_dir is not None:
        env["DUCK_SKILLS_DIR"] = str(settings.skills_dir)
    return env


FRESH_PROCESSES = "DUCK_TEST_FRESH_PROCESSES"
"""Set to 1 to start every `ducklm` as a new interpreter instead of forking the zygote."""

_zygote = Zygote()


def stop_zygote() -> None:
    """Stop this test process's zygote, if it started one (tests/conftest.py, at the end)."""
    _zygote.stop()


async def start_cli(
    *args: str, env: dict[str, str], cwd: Path, stdin: int = asyncio.subprocess.DEVNULL
) -> asyncio.subprocess.Process | ForkedProcess:
    """Start `ducklm ARGS` as a process of its own and return it (to kill it mid-run).

    It is forked from the zygote, which has imported DuckLM already
    (tests/support/zygote.py): the same command in a real process, without paying the
    imports again. `stdin` is DEVNULL or PIPE.
    """
    if os.environ.get(FRESH_PROCESSES) == "1":
        return await start_fresh_cli(*args, env=env, cwd=cwd, stdin=stdin)
    return await _zygote.start(
        list(args), env=env, cwd=cwd, stdin_pipe=stdin == asyncio.subprocess.PIPE
    )


async def start_fresh_cli(
    *args: str, env: dict[str, str], cwd: Path, stdin: int = asyncio.subprocess.DEVNULL
) -> asyncio.subprocess.Process:
    """Start `python -m ducklm.cli.main ARGS` in a new interpreter: for the tests about
    the process's own start-up (what it imports, how long it takes)."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "ducklm.cli.main",
        *args,
        env=env,
        cwd=cwd,
        stdin=stdin,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


LIMIT_S = 180.0
"""A guard against a hung command, not a speed test: `ducklm doctor` loads the embedding
model (19 s at load 1.5) and once took over 60 s on a busy CI machine."""


async def run_cli(
    *args: str, env: dict[str, str], cwd: Path, stdin: str | None = None, limit_s: float = LIMIT_S
) -> CliResult:
    """Run `ducklm ARGS` (forked: `start_cli`) to completion without blocking the event loop."""
    proc = await start_cli(*args, env=env, cwd=cwd, stdin=asyncio.subprocess.PIPE)
    talk = asyncio.ensure_future(proc.communicate(stdin.encode() if stdin is not None else None))
    try:
        out, err = await asyncio.wait_for(asyncio.shield(talk), limit_s)
    except TimeoutError:
        # Killed and read to its end, so its pipes close here (an unclosed one fails a
        # later test as an unraisable ResourceWarning) and the failure says what it did.
        proc.kill()
        out, err = await talk
        raise AssertionError(
            f"ducklm {' '.join(args)} took over {limit_s} s; its stderr:\n{err.decode()[-3000:]}"
        ) from None
    assert proc.returncode is not None
    return CliResult(proc.returncode, out.decode(), err.decode())


LOADS_SCRIPT = """
import json, sys
from ducklm.cli.main import main
code = main(sys.argv[2:])
named = json.loads(sys.argv[1])
loaded = [m for m in sys.modules if any(m == n or m.startswith(n + ".") for n in named)]
print("LOADED " + json.dumps(sorted(loaded)), file=sys.stderr)
sys.exit(code)
"""


async def run_cli_loading(
    modules: Sequence[str], *args: str, env: dict[str, str], cwd: Path, limit_s: float = LIMIT_S
) -> tuple[CliResult, list[str]]:
    """`run_cli`, and which of `modules` (or their submodules) the command imported."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", LOADS_SCRIPT, json.dumps(list(modules)), *args, env=env, cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), limit_s)
    assert proc.returncode is not None
    text = err.decode()
    assert "LOADED " in text, f"the command ended before saying what it loaded:\n{text}"
    stderr, _, loaded = text.rpartition("LOADED ")
    return CliResult(proc.returncode, out.decode(), stderr), json.loads(loaded)


async def kill_mid_run(llm: ScriptedLLM, env: dict[str, str], cwd: Path, thread: str) -> None:
    """Start `ducklm chat` on `thread` and kill it while its model call hangs.

    The next DuckLM to start on the same data marks that task interrupted by restart.
    """
    llm.script(reply("too late", delay_s=8))
    proc = await start_cli(
        "chat", "hello", "--thread", thread, "--no-critic", "--no-memory", env=env, cwd=cwd
    )
    await model_reached(llm)  # the process first loads its models
    proc.kill()
    await proc.wait()


async def model_reached(llm: ScriptedLLM, limit_s: float = 60) -> None:
    """Wait until the scripted model has a request (a run got that far), or fail."""
    for _ in range(int(limit_s / 0.05)):
        if llm.requests:
            return
        await asyncio.sleep(0.05)
    pytest.fail("the run never reached the model")


SERVING = re.compile(r"web chat at (http://\S+)/")
LOGIN = re.compile(r"log the browser in at (http://\S+)")


async def announced_urls(
    stderr: asyncio.StreamReader, said: list[str] | None = None
) -> tuple[str, str]:
    """Read `ducklm serve`'s stderr up to its login line: its base URL and login URL.

    Each line read is added to `said`, when given.
    """
    url = None
    while line := (await stderr.readline()).decode():
        if said is not None:
            said.append(line.rstrip())
        if found := SERVING.search(line):
            url = found.group(1)
        if (found := LOGIN.search(line)) and url is not None:
            return url, found.group(1)
    raise AssertionError(f"ducklm serve ended without saying where it serves: {said}")


@asynccontextmanager
async def serving(
    env: dict[str, str], cwd: Path, *flags: str, limit_s: float = 60
) -> AsyncIterator[tuple[str, str]]:
    """`ducklm serve --port 0` until the block ends (then Ctrl-C): base URL and login URL."""
    proc = await start_cli("serve", "--port", "0", *flags, env=env, cwd=cwd)
    assert proc.stderr is not None
    try:
        yield await asyncio.wait_for(announced_urls(proc.stderr), limit_s)
    finally:
        proc.send_signal(signal.SIGINT)
        await asyncio.wait_for(proc.communicate(), 30)
