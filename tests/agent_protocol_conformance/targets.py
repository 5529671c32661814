"""The two servers this repository checks, started for the suite: the only glue to DuckLM.

- `reference`: `langgraph dev` serving DuckLM's own `langgraph.json`
  (`tests/support/langgraph_dev.py`);
- `ducklm`: `ducklm serve --port 0` as a person runs it, with a known token.

Both run DuckLM's graph on one scripted model (`model_script.py`) with a workspace of
their own that holds `notes.txt`, so an `overwrite notes.txt` turn asks for approval.
Replace this module with `AP_CONFORMANCE_URL` (see `server_under_test.py`) to check
another server.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ducklm.learning.skills import default_skills_dir
from tests.support.cli import SERVING
from tests.support.langgraph_dev import (
    REPO_ROOT,
    LangGraphDevError,
    langgraph_dev,
    spawn_logged,
    stop,
    tail,
    write_config,
)
from tests.support.scripted_llm import ScriptedLLM

from .model_script import ConformanceModel
from .server_under_test import Target

TOKEN = "conformance-token-0123456789abcdef"
QUIET = {"critic": False, "memory": False}
"""DuckLM's per-run switches: no critic or memory policy after each answer."""
STARTUP_S = 90.0
WINDOW = 65536
WARMUP_S = 300.0
"""A server's first turn loads the embedding model and more: a minute on a busy machine."""


@contextmanager
def running(name: str, folder: Path) -> Iterator[Target]:
    """Start the target called `name` in `folder` until the block ends."""
    with ScriptedLLM() as llm:
        llm.set_responder(ConformanceModel())
        # Served at /props as llama-server does. Without a window from the server, DuckLM
        # takes the scripted usage (a word count, far below its own estimate) for a cut
        # prompt and shrinks its budget for good: a long-lived server's later turns fail.
        llm.props = {"default_generation_settings": {"n_ctx": WINDOW}}
        env = _duck_env(llm, folder)
        if name not in ("reference", "ducklm"):
            raise ValueError(f"unknown target {name!r}: 'reference' or 'ducklm'")
        start = _reference if name == "reference" else _ducklm
        with start(env, folder) as target:
            _warm_up(target)
            yield target


def _duck_env(llm: ScriptedLLM, folder: Path) -> dict[str, str]:
    workspace = folder / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("version 0\n", encoding="utf-8")
    skills = shutil.copytree(default_skills_dir(), folder / "skills")
    return {
        "DUCK_LLM_BASE_URL": llm.base_url,
        "DUCK_DATA_DIR": str(folder / "data"),
        "DUCK_WORKSPACE": str(workspace),
        "DUCK_SKILLS_DIR": str(skills),
        "DUCK_MODEL_RETRY_INITIAL_INTERVAL": "0.01",
    }


@contextmanager
def _reference(env: dict[str, str], folder: Path) -> Iterator[Target]:
    config = write_config(REPO_ROOT / "langgraph.json", folder / "server")
    with langgraph_dev(config, env=env, log_path=folder / "langgraph-dev.log") as server:
        yield Target(name="reference", url=server.url, context=QUIET, dialect="langgraph")


@contextmanager
def _ducklm(env: dict[str, str], folder: Path) -> Iterator[Target]:
    log_path = folder / "ducklm-serve.log"
    command = [sys.executable, "-m", "ducklm.cli.main", "serve", "--port", "0"]
    process = spawn_logged(command, folder, {**env, "DUCK_API_TOKEN": TOKEN}, log_path)
    try:
        url = _announced_url(process, log_path)
        yield Target(
            name="ducklm",
            url=url,
            headers={"Authorization": f"Bearer {TOKEN}"},
            context=QUIET,
            dialect="ducklm",
        )
    finally:
        stop(process)


def _announced_url(process: subprocess.Popen[bytes], log_path: Path) -> str:
    """The base URL `ducklm serve` printed, once it answers `/health`."""
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LangGraphDevError(f"ducklm serve exited:\n{tail(log_path)}")
        found = SERVING.search(log_path.read_text(encoding="utf-8", errors="replace"))
        if found and _healthy(found.group(1)):
            return found.group(1)
        time.sleep(0.2)
    raise LangGraphDevError(f"ducklm serve did not start in {STARTUP_S}s:\n{tail(log_path)}")


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _warm_up(target: Target) -> None:
    """One thread-less turn, so no case pays for the server's first."""
    body = {
        "assistant_id": target.assistant,
        "input": {"messages": [{"role": "user", "content": "hello"}]},
        "context": target.context,
    }
    request = urllib.request.Request(
        f"{target.url}/runs/wait",
        data=json.dumps(body).encode(),
        headers={**target.headers, "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=WARMUP_S) as response:
        answer = json.load(response)
    if "Hello back" not in json.dumps(answer):
        raise RuntimeError(f"the warm-up turn on {target.name} did not answer: {answer}")
