"""Hung file tools through the whole graph: each call is an error in its time, the turn and
the next one go on (over real HTTP to the scripted model server).

The hang is real: a FIFO opened for reading without O_NONBLOCK waits in the kernel for a
writer that never comes (tests/support/hung_files.py).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from ducklm.tools import file_threads, files
from tests.support.hung_files import BLOCKING_READ, release
from tests.support.scripted_llm import ScriptedLLM, call, reply

DEADLINE_S = 0.5
HUNG_CALLS = 8  # more than a 2-core machine's default executor has workers (6)


@pytest.fixture
def pipes(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    # One FIFO per call: identical calls in a turn are answered from the first
    # (`ducklm/turn/tool_step/repeats.py`), and each of these must really hang.
    paths = [workspace / f"pipe{i}" for i in range(HUNG_CALLS)]
    for path in paths:
        os.mkfifo(path)
    monkeypatch.setattr(files, "_READ_FLAGS", BLOCKING_READ)
    yield paths
    release(*paths)


@pytest.fixture
async def duck(settings: Settings) -> AsyncIterator[DuckLM]:
    timed = settings.model_copy(update={"file_tool_timeout_s": DEADLINE_S})
    async with DuckLM.open(timed) as runtime:
        yield runtime


async def test_hung_reads_are_errors_and_the_next_turn_runs(
    duck: DuckLM, llm: ScriptedLLM, pipes: list[Path], workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "notes.md").write_text, "buy duck food\n")
    reads = [call("file_read", path=path.name) for path in pipes]
    llm.script(reply(tool_calls=reads), reply("The pipe did not answer."))
    async with asyncio.timeout(30):
        first = await duck.run("read the pipe", critic=False, memory=False)
    assert first.status == "completed"
    assert first.answer == "The pipe did not answer."
    finished = [e for e in first.events if e["type"] == "tool_call_finished"]
    assert len(finished) == HUNG_CALLS
    for event in finished:
        assert event["status"] == "error"
        assert event["output"].startswith(f"file_read did not finish in {DEADLINE_S:g} s")
    # The model read the error, as any tool error.
    assert llm.requests[1]["messages"][-1]["content"].startswith("file_read did not finish")

    # Every hung read is still in the kernel; the next turn's tools do not wait for them.
    assert sum(t.is_alive() for t in file_threads._threads) == HUNG_CALLS
    llm.script(reply(tool_calls=[call("file_read", path="notes.md")]), reply("Duck food."))
    async with asyncio.timeout(10):
        second = await duck.run("what is in notes.md?", critic=False, memory=False)
    done = next(e for e in second.events if e["type"] == "tool_call_finished")
    assert (done["status"], done["output"]) == ("success", "buy duck food\n")
    assert second.answer == "Duck food."
