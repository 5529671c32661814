"""The deadline of `ducklm serve`'s stop: a process held by a hung thread still ends.

`asyncio.run` joins the default executor's threads when it ends, and Python cannot stop a
thread blocked in a call; without the deadline the process below would never exit.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from ducklm.cli.exit_codes import EXIT_INTERRUPTED

HELD = """
import asyncio, threading
from ducklm.cli.stopping import arm_deadline

async def main():
    never = threading.Event()
    asyncio.get_running_loop().run_in_executor(None, never.wait)  # a call that never returns
    arm_deadline(0.5)

asyncio.run(main())
print("not reached: asyncio.run waits for the executor's thread")
"""


@pytest.mark.slow
async def test_a_process_held_by_a_hung_thread_ends_at_the_deadline(tmp_path: Path) -> None:
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", HELD, cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == EXIT_INTERRUPTED
    assert "still stopping 0.5 s after the signal" in err.decode()
    assert out == b""
    assert time.monotonic() - started < 15  # most of it is Python's own start
