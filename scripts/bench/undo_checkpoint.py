"""Undo: what a workspace checkpoint costs a tool step, against the step's own time.

A workspace of 1,000 files / 50 MB. The step is a real `shell_exec` in the sandbox (the
baseline, timed in the same run, interleaved): one `sed -i` on one file, and a
whole-tree `find -exec sed -i` that rewrites all 1,000. The checkpoint is what the tool
node adds around it (`ducklm.undo.step`): the snapshot before the step's first call,
the snapshot after it, and the change record. The first checkpoint of a workspace
hashes every file once; it is reported apart.

    .venv/bin/python scripts/bench/undo_checkpoint.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from _common import header, median_ms, table

from ducklm.tools.sandbox.runner import detect_protection
from ducklm.tools.shell import ShellEnv, shell_exec
from ducklm.undo.service import WorkspaceUndo
from ducklm.undo.snapshot import Limits

FILES = 1000
FILE_BYTES = 50 * 1024 * 1024 // FILES
REPS = 9
ONE_FILE = "sed -i 1s/^/x/ d07/f0700.txt"  # changes the file every time
WHOLE_TREE = "find . -name '*.txt' -exec sed -i 1s/^/x/ {} +"


def make_workspace(root: Path) -> None:
    for i in range(FILES):
        folder = root / f"d{i // 100:02d}"
        folder.mkdir(exist_ok=True)
        line = b"foo " + os.urandom(45).hex().encode() + b"\n"  # text that compresses little
        (folder / f"f{i:04d}.txt").write_bytes((line * (FILE_BYTES // len(line) + 1))[:FILE_BYTES])


async def run_step(shell: ShellEnv, command: str) -> float:
    started = time.perf_counter()
    message = await shell_exec.ainvoke(
        {
            "type": "tool_call",
            "id": "b",
            "name": "shell_exec",
            "args": {"command": command, "shell": shell},
        }
    )
    assert message.artifact["exit_code"] == 0, message.text
    return time.perf_counter() - started


async def checkpointed(
    undo: WorkspaceUndo, ws: Path, shell: ShellEnv, command: str
) -> tuple[float, float]:
    """One step with its checkpoint: (step's own seconds, checkpoint seconds)."""
    started = time.perf_counter()
    before = await undo.snapshot(ws)
    taken = time.perf_counter() - started
    step = await run_step(shell, command)
    started = time.perf_counter()
    after = await undo.snapshot(ws, meta={"kind": "call", "workspace": str(ws)}, commit=False)
    change = await undo.record("bench", before, after)
    assert change is not None
    return step, taken + time.perf_counter() - started


async def measure(
    command: str, undo: WorkspaceUndo, ws: Path, shell: ShellEnv
) -> list[list[object]]:
    """Rows for `command`: DuckLM's steps in a row, and a step after an outside change.

    Each rep runs the step once plain (the baseline; it changes the files behind the
    checkpoints' back, as a person's edit would), then twice with a checkpoint: the first
    finds the files changed since the last checkpoint, the second is the usual case, a
    step after DuckLM's own last step.
    """
    plain: list[float] = []
    usual: list[float] = []
    outside: list[float] = []
    for _ in range(REPS):  # interleaved: the same machine load for all three
        plain.append(await run_step(shell, command))
        outside.append((await checkpointed(undo, ws, shell, command))[1])
        usual.append((await checkpointed(undo, ws, shell, command))[1])
    base = median_ms(plain)
    name = command[:34]
    return [
        [f"{name} (after DuckLM's step)", base, median_ms(usual), median_ms(usual) / base],
        [f"{name} (after an outside edit)", base, median_ms(outside), median_ms(outside) / base],
    ]


async def main() -> None:
    header(
        "undo checkpoint cost per step",
        f"workspace: {FILES} files, {FILES * FILE_BYTES // 2**20} MB; {REPS} interleaved reps",
        "baseline: the same shell_exec step without a checkpoint, in this run",
    )
    with tempfile.TemporaryDirectory() as tmp:
        ws, data = Path(tmp) / "ws", Path(tmp) / "data"
        ws.mkdir()
        await asyncio.to_thread(make_workspace, ws)
        shell = ShellEnv(workspace=ws, protection=await detect_protection())
        undo = WorkspaceUndo(data / "undo", Limits(512 * 2**20, 32 * 2**20))
        started = time.perf_counter()
        await undo.snapshot(ws)
        first = time.perf_counter() - started
        print(
            f"first checkpoint of the workspace (hashes all {FILES} files): {first * 1000:.0f} ms\n"
        )
        rows = [
            *await measure(ONE_FILE, undo, ws, shell),
            *await measure(WHOLE_TREE, undo, ws, shell),
        ]
        table(["step", "step alone ms", "checkpoint ms", "checkpoint / step"], rows)


if __name__ == "__main__":
    asyncio.run(main())
