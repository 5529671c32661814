"""A file tool that blocks in the kernel ends as an error in its time, and holds nothing shared.

The block is real: a FIFO opened for reading waits in the kernel for a writer
(tests/support/hung_files.py says how). Each test lets the blocked threads go at its
end, so none outlives it.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.tools import BaseTool

from ducklm.tools import file_threads, files
from ducklm.tools.errors import ToolError
from ducklm.tools.file_threads import TIMED_TOOLS, deadline_args, run_file_work
from ducklm.tools.files import file_read, list_dir
from ducklm.tools.registry import default_tools
from tests.support.hung_files import BLOCKING_READ, release


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.md").write_text("ducks\n")
    return root


@pytest.fixture
def pipe(ws: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A FIFO in the workspace that file_read now opens as a blocking open would."""
    path = ws / "pipe"
    os.mkfifo(path)
    monkeypatch.setattr(files, "_READ_FLAGS", BLOCKING_READ)
    yield path
    release(path)


def read_call(path: str, ws: Path, timeout_s: float) -> dict[str, object]:
    return {"path": path, "workspace": ws, "timeout_s": timeout_s}


async def test_a_blocked_read_is_an_error_within_its_deadline(pipe: Path, ws: Path) -> None:
    started = time.monotonic()
    with pytest.raises(ToolError) as failed:
        await file_read.ainvoke(read_call("pipe", ws, 0.3))
    assert time.monotonic() - started < 2
    assert str(failed.value).startswith("file_read did not finish in 0.3 s")
    assert "try another path" in str(failed.value)
    [blocked] = file_threads._threads
    assert blocked.daemon and blocked.name == "ducklm-file_read" and blocked.is_alive()


async def test_hung_reads_leave_the_shared_executor_free(pipe: Path, ws: Path) -> None:
    # More hung calls than the default executor has workers: it once ran them all, and
    # every later to_thread (the next turn's file tool, the database, ...) waited.
    workers = min(32, (os.cpu_count() or 1) + 4)
    calls = [file_read.ainvoke(read_call("pipe", ws, 0.5)) for _ in range(workers + 1)]
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(o, ToolError) and "did not finish" in str(o) for o in outcomes)
    assert len([t for t in file_threads._threads if t.is_alive()]) == workers + 1
    async with asyncio.timeout(2):
        assert await asyncio.to_thread(lambda: "free") == "free"
        assert await file_read.ainvoke(read_call("notes.md", ws, 5)) == "ducks\n"
        assert "pipe  (fifo, not read)" in await list_dir.ainvoke({"workspace": ws})


async def test_a_cancelled_turn_does_not_wait_for_its_blocked_call(pipe: Path, ws: Path) -> None:
    reading = asyncio.create_task(file_read.ainvoke(read_call("pipe", ws, 60)))
    await asyncio.sleep(0.2)  # the thread is in the kernel's open by now
    reading.cancel()
    async with asyncio.timeout(1):
        with pytest.raises(asyncio.CancelledError):
            await reading


async def test_past_the_cap_a_file_tool_refuses_at_once(
    pipe: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_threads, "MAX_THREADS", 2)
    for _ in range(2):
        with pytest.raises(ToolError):
            await file_read.ainvoke(read_call("pipe", ws, 0.2))
    started = time.monotonic()
    with pytest.raises(ToolError) as refused:
        await file_read.ainvoke(read_call("notes.md", ws, 5))
    assert time.monotonic() - started < 0.5
    assert "2 earlier file tool calls have not finished" in str(refused.value)
    await asyncio.to_thread(release, pipe)
    assert await file_read.ainvoke(read_call("notes.md", ws, 5)) == "ducks\n"


async def test_a_write_past_its_deadline_says_it_may_still_land() -> None:
    gate = threading.Event()
    try:
        with pytest.raises(ToolError) as failed:
            await run_file_work("file_write", 0.2, gate.wait)
    finally:
        gate.set()
    assert str(failed.value).startswith("file_write did not finish in 0.2 s")
    assert "check the file before writing it again" in str(failed.value)


async def test_the_work_s_own_errors_pass_through_unchanged(ws: Path) -> None:
    with pytest.raises(ToolError, match="no file or folder"):
        await file_read.ainvoke(read_call("missing.md", ws, 5))

    def times_out() -> None:
        raise TimeoutError("ETIMEDOUT from a network file system")

    with pytest.raises(TimeoutError, match="ETIMEDOUT"):
        await run_file_work("file_read", 5, times_out)


def test_the_tools_that_take_a_deadline_are_the_ones_the_tool_step_gives_one() -> None:
    registry = default_tools()
    takes = {t.name for t in registry.tools if _injected(t, "timeout_s")}
    assert takes == TIMED_TOOLS
    settings = file_threads.Settings(file_tool_timeout_s=7)
    assert deadline_args("file_read", settings) == {"timeout_s": 7}
    assert deadline_args("shell_exec", settings) == {}


def _injected(tool: BaseTool, arg: str) -> bool:
    schema = tool.get_input_schema().model_json_schema()
    return arg in schema["properties"] and arg not in tool.args


EXITS = """
import asyncio, os, sys
from pathlib import Path
from ducklm.tools import files
files._READ_FLAGS &= ~os.O_NONBLOCK
ws = Path(sys.argv[1])
async def main():
    try:
        await files.file_read.ainvoke({"path": "pipe", "workspace": ws, "timeout_s": 0.2})
    except Exception as exc:
        print(exc)
asyncio.run(main())
"""


@pytest.mark.slow
async def test_a_blocked_call_does_not_delay_the_exit(pipe: Path, ws: Path, tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", EXITS, str(ws), cwd=tmp_path, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 20)  # Python's own start is most of it
    assert proc.returncode == 0
    assert out.decode().startswith("file_read did not finish in 0.2 s")
