"""Start and stop `langgraph dev` (the in-memory LangGraph API server) for tests.

The server runs as a child process in its own process group, logging to a file, and
everything here blocks: call it from sync fixtures, never from the event loop.

It does not run from the repository root. `langgraph dev` resolves every relative path
(graph files, the `env` file) against its working folder, loads that `.env` over the
environment it was given, and keeps its threads in `./.langgraph_api`. Run from the
repository root, a developer's `.env` could send the test to a real model and workspace,
and the test's threads would land in (and race with) the developer's own dev server data.
So `write_config` copies the repository's `langgraph.json` into a scratch folder with the
graph and dependency paths made absolute, and the server runs there. Its `env` entry is
kept as it is, so it names a `.env` that does not exist, as on a clean clone.

Example:
    ```python
    config = write_config(REPO_ROOT / "langgraph.json", tmp_path / "server")
    with langgraph_dev(config, env={"DUCK_LLM_BASE_URL": llm.base_url}) as server:
        client = get_client(url=server.url, api_key=None)
    ```
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["REPO_ROOT", "LangGraphDev", "LangGraphDevError", "langgraph_dev", "write_config"]

REPO_ROOT = Path(__file__).resolve().parents[2]

# Keeps the server off the network: no LangSmith tracing or org look-up, no CLI
# analytics, no PyPI version check; plain log lines instead of ANSI colours.
OFFLINE_ENV: dict[str, str] = {
    "LANGSMITH_TRACING": "false",
    "LANGSMITH_TRACING_V2": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGCHAIN_TRACING": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LOG_COLOR": "false",
    "PYTHONUNBUFFERED": "1",
}
# Inherited variables with these prefixes are dropped: DuckLM settings come only from the
# test, LangSmith/LangGraph keys would switch on tracing or the licence beacon, and the
# server only ever talks to loopback, which a proxy must not get in the way of.
DROPPED_PREFIXES = ("DUCK_", "LANGSMITH_", "LANGCHAIN_", "LANGGRAPH_", "OPENAI_")
DROPPED_NAMES = frozenset({"http_proxy", "https_proxy", "all_proxy", "no_proxy"})

# The banner line `- 🚀 API: http://127.0.0.1:PORT`: the address the server really uses,
# which differs from `--port` when that port was taken.
_API_LINE = re.compile(r"API:\s*(?:\x1b\[[0-9;]*m)?(https?://[^\s\x1b]+)")
# blockbuster says "Blocking call to X"; langgraph dev adds "a synchronous blocking call".
_BLOCKING = re.compile(r"BlockingError|blocking call", re.IGNORECASE)


class LangGraphDevError(RuntimeError):
    """The server did not start; the message ends with the tail of its log."""


@dataclass(frozen=True)
class LangGraphDev:
    """A running `langgraph dev` server."""

    url: str
    """Base URL of the API, e.g. `http://127.0.0.1:43123`."""
    log_path: Path
    """The server's stdout and stderr."""
    process: subprocess.Popen[bytes]

    def log_text(self) -> str:
        """The whole log so far. Blocking (file read)."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def log_tail(self, lines: int = 80) -> str:
        """The last `lines` lines of the log. Blocking (file read)."""
        return tail(self.log_path, lines)

    def blocking_lines(self) -> list[str]:
        """Log lines reporting a blocking call on the server's event loop. Blocking."""
        return [line for line in self.log_text().splitlines() if _BLOCKING.search(line)]


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (the OS picks it for a socket bound to 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def write_config(source: Path, folder: Path) -> Path:
    """Copy the `langgraph.json` at `source` into `folder`, with absolute local paths.

    Returns:
        The path of the copy.
    """
    base = source.resolve().parent
    config: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    config["dependencies"] = [
        str(base / dep) if dep.startswith(".") else dep for dep in config.get("dependencies", [])
    ]
    config["graphs"] = {
        graph_id: _absolute_spec(spec, base) for graph_id, spec in config["graphs"].items()
    }
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "langgraph.json"
    target.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return target


def _absolute_spec(spec: Any, base: Path) -> Any:
    if isinstance(spec, dict):
        return {**spec, "path": _absolute_spec(spec["path"], base)}
    path, sep, variable = str(spec).rpartition(":")
    if sep and path.startswith("."):
        return f"{base / path}:{variable}"
    return spec


def server_env(overrides: Mapping[str, str]) -> dict[str, str]:
    """This process's environment minus DuckLM, LangSmith and proxy settings, plus `overrides`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(DROPPED_PREFIXES) and k.lower() not in DROPPED_NAMES
    }
    return {**env, **OFFLINE_ENV, **overrides}


@contextmanager
def langgraph_dev(
    config: Path,
    *,
    env: Mapping[str, str],
    log_path: Path | None = None,
    startup_timeout_s: float = 90.0,
) -> Iterator[LangGraphDev]:
    """Run `langgraph dev --config CONFIG` in the config's folder until the block exits.

    The server gets a free port, no browser, no reloader, and the environment
    `server_env(env)`. It is ready once it answers `GET /ok` at the address its own
    banner printed, while still running. On exit its whole process group is stopped:
    SIGTERM, then SIGKILL after ten seconds.

    Raises:
        LangGraphDevError: The server exited or did not answer in `startup_timeout_s`.
    """
    folder = config.parent
    log_path = log_path or folder / "langgraph-dev.log"
    command = [
        str(Path(sys.executable).with_name("langgraph")),
        "dev",
        "--config",
        str(config),
        "--host",
        "127.0.0.1",
        "--port",
        str(free_port()),
        "--no-browser",
        "--no-reload",
    ]
    process = spawn_logged(command, folder, env, log_path)
    try:
        url = _wait_until_ready(process, log_path, startup_timeout_s)
        yield LangGraphDev(url=url, log_path=log_path, process=process)
    finally:
        stop(process)


def _wait_until_ready(process: subprocess.Popen[bytes], log_path: Path, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    url: str | None = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LangGraphDevError(
                f"langgraph dev exited with code {process.returncode}:\n{tail(log_path)}"
            )
        if url is None:
            match = _API_LINE.search(log_path.read_text(encoding="utf-8", errors="replace"))
            url = match.group(1).rstrip("/") if match else None
        if url is not None and _answers_ok(url) and process.poll() is None:
            return url
        time.sleep(0.2)
    raise LangGraphDevError(
        f"langgraph dev did not answer /ok within {timeout_s}s (url: {url}):\n{tail(log_path)}"
    )


def _answers_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
            return bool(response.status == 200 and json.load(response).get("ok") is True)
    except (OSError, ValueError):
        return False


def stop(process: subprocess.Popen[bytes], timeout_s: float = 10.0) -> None:
    """Stop the process group of `process`: SIGTERM, then SIGKILL after `timeout_s`."""
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with suppress(subprocess.TimeoutExpired):
        process.wait(timeout=timeout_s)
    # Also whatever the server started and left behind in its group.
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=timeout_s)


def tail(path: Path, lines: int = 80) -> str:
    """The last `lines` lines of the text file at `path`, or a note if it is missing."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:])


def spawn_logged(
    command: list[str], folder: Path, env: dict[str, str], log_path: Path
) -> subprocess.Popen[bytes]:
    """Start a server process in its own session, output to `log_path`, no stdin."""
    with log_path.open("wb") as log:
        return subprocess.Popen(
            command,
            cwd=folder,
            env=server_env(env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
