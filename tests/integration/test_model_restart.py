"""A turn sent while DuckLM restarts its crashed model server waits for it, then goes on.

The server is `tests/support/fake_llama_server.py`, started and kept by
`local_server_for` as `ducklm serve` does (detached, under the supervisor, with the
keeper). The test kills the server process itself (SIGSEGV), as a crash would; a turn
then starts while the keeper waits to restart it, so its model call finds the
connection refused.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from ducklm.config.settings import Settings
from ducklm.models.local import server as llama
from ducklm.models.local.autostart import local_server_for
from ducklm.models.local.keeper import RestartPolicy
from ducklm.models.local.state import LOCAL_SERVERS, ServerWatch, Status
from ducklm.runtime.facade import DuckLM
from tests.integration.test_model_crash import STAMP, _local, _until
from tests.support.fake_llama_server import (
    ANSWER,
    hold_starts,
    refuse_starts,
    release_starts,
    server_pid,
)

pytestmark = pytest.mark.slow

START_COMMAND = "ducklm llama start"
FAST = {"poll_s": 0.05, "crash_window_s": 60.0}


@asynccontextmanager
async def kept(
    settings: Settings, tmp_path: Path, *, backoff_s: float, wait_s: float
) -> AsyncIterator[tuple[Settings, ServerWatch, list[str]]]:
    """A healthy fake server kept as `ducklm serve` keeps it, and its watch."""
    local = await _local(settings, tmp_path, "healthy")
    local = local.model_copy(update={"model_restart_wait_s": wait_s})
    said: list[str] = []
    policy = RestartPolicy(backoff_s=backoff_s, max_backoff_s=backoff_s, **FAST)
    async with local_server_for(local, said.append, policy) as served:
        assert served.llm_base_url is not None
        watch = LOCAL_SERVERS.find(served.llm_base_url)
        assert watch is not None, "the keeper registers the server it keeps"
        yield served, watch, said


async def crash_server(settings: Settings, watch: ServerWatch) -> None:
    """Kill the server (not its supervisor) with SIGSEGV; wait until it is restarting."""
    record = await llama.running(settings)
    assert record is not None
    os.kill(await asyncio.to_thread(server_pid, record.pid), signal.SIGSEGV)
    await _until(lambda: _is(watch, "restarting"))


async def _turn(duck: DuckLM) -> tuple[list[dict[str, Any]], float]:
    """Run a turn: its events, and the seconds from its first wait for the server to its end.

    Measured from the wait: before its first model call a turn may load the embedding
    model, which takes its own while.
    """
    events: list[dict[str, Any]] = []
    waited_at = None
    async for item in duck.stream("hello", critic=False, memory=False):
        events.append(item)
        if item["type"] == "model_restarting" and waited_at is None:
            waited_at = time.monotonic()
    assert waited_at is not None, events
    return events, time.monotonic() - waited_at


async def _is(watch: ServerWatch, status: Status) -> bool:
    return watch.state.status == status


def _texts(events: list[dict[str, Any]]) -> str:
    return "\n".join(str(e.get(k, "")) for e in events for k in ("message", "why", "answer"))


async def test_a_turn_sent_while_the_server_restarts_waits_and_goes_on(
    settings: Settings, tmp_path: Path
) -> None:
    async with kept(settings, tmp_path, backoff_s=0.5, wait_s=60.0) as (served, watch, said):
        model = served.llama_model
        assert model is not None
        async with DuckLM.open(served) as duck:
            # The restarted server waits before it listens until the turn waits for it.
            await asyncio.to_thread(hold_starts, model)
            await crash_server(served, watch)
            events = []
            async for item in duck.stream("hello", critic=False, memory=False):
                events.append(item)
                if item["type"] == "model_restarting":
                    await asyncio.to_thread(release_starts, model)
        done = events[-1]
        assert done["status"] == "completed", events
        assert ANSWER in done["answer"]
        types = [e["type"] for e in events]
        assert "error" not in types
        assert types.index("model_restarting") < types.index("model_restarted")
        (restarting,) = [e for e in events if e["type"] == "model_restarting"]
        assert restarting["message"] == "restarting the model server"
        assert re.fullmatch(rf"it crashed \(SIGSEGV\) at {STAMP}", restarting["why"])
        assert restarting["wait_s"] == 60.0
        assert watch.state.status == "up"
        assert START_COMMAND not in _texts(events)
        (restart,) = [line for line in said if "restarting it" in line]
        assert START_COMMAND not in restart, "DuckLM restarts it: no command to run"


async def test_a_restart_that_outlasts_the_wait_fails_the_turn_without_a_command_to_run(
    settings: Settings, tmp_path: Path
) -> None:
    # The keeper waits 10 minutes before it restarts; the turn waits 1 s.
    async with (
        kept(settings, tmp_path, backoff_s=600.0, wait_s=1.0) as (served, watch, _),
        DuckLM.open(served) as duck,
    ):
        await crash_server(served, watch)
        events, took = await _turn(duck)
    assert events[-1]["status"] == "failed", events
    assert took < 15, f"the wait is bounded, yet the turn went on {took:.1f} s"
    (error,) = [e for e in events if e["type"] == "error"]
    assert re.match(
        rf"The local model server crashed \(SIGSEGV\) at {STAMP}\. DuckLM is restarting it, "
        r"but it was not back within 1 s \(DUCK_MODEL_RESTART_WAIT_S\)",
        error["message"],
    ), error["message"]
    assert START_COMMAND not in _texts(events)
    assert "not reachable" not in error["message"]
    assert [e["type"] for e in events].count("model_restarting") == 1, "waited once"


async def test_a_server_that_does_not_come_back_ends_the_turn_with_the_crash_and_what_to_do(
    settings: Settings, tmp_path: Path
) -> None:
    async with kept(settings, tmp_path, backoff_s=1.0, wait_s=60.0) as (served, watch, said):
        assert served.llama_model is not None
        await asyncio.to_thread(refuse_starts, served.llama_model)
        async with DuckLM.open(served) as duck:
            # Held until the turn waits: then the restart fails, and DuckLM gives up.
            await asyncio.to_thread(hold_starts, served.llama_model)
            await crash_server(served, watch)
            events: list[dict[str, Any]] = []
            async for item in duck.stream("hello", critic=False, memory=False):
                events.append(item)
                if item["type"] == "model_restarting":
                    await asyncio.to_thread(release_starts, served.llama_model)
        assert watch.state.status == "down"
    assert events[-1]["status"] == "failed", events
    (error,) = [e for e in events if e["type"] == "error"]
    message = error["message"]
    assert re.match(
        rf"The local model server crashed \(SIGSEGV\) at {STAMP}, and DuckLM stopped "
        r"restarting it \(it did not come back\): llama\.cpp crashed \(segmentation fault\)",
        message,
    ), message
    assert message.endswith(f"then start it again: `{START_COMMAND}`."), "DuckLM gave up"
    assert any("did not come back" in line for line in said)
