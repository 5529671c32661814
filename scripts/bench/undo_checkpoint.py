"""Undo: what the workspace checkpoint adds to one `shell_exec` on a 10,000-file workspace.

Every shell command gets a checkpoint, its class whatever it is (`tools/policy.py:
may_change_workspace`), so reads pay for it too. Measured in the same run, interleaved
(the same machine load for every row): a real `shell_exec` in the sandbox alone (the
baseline), then the same call with the tool node's checkpoint around it
(`ducklm.undo.step.StepCheckpoint`: the step's snapshot before, the snapshot after, and
a change record when something changed), a new step each time, as in a run of one call
per step. The calls: a read (`cat`, changes nothing) with no write in the 2 s before
it, the same read right after writes (the files they wrote are racy, `ducklm/undo/
survey.py`, and are read again), a one-file write (`sed -i`), and the read after a
person's edit outside DuckLM (the checkpoint before it finds the edit). Each snapshot
walks every entry of the workspace (`survey.py`). The first checkpoint of a workspace
reads and stores every file once; it is reported apart.

    .venv/bin/python scripts/bench/undo_checkpoint.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from _common import header, median_ms, table
from langgraph.runtime import Runtime

from ducklm.tools.sandbox.runner import detect_protection
from ducklm.tools.shell import ShellEnv, shell_exec
from ducklm.undo.service import WorkspaceUndo
from ducklm.undo.snapshot import Limits
from ducklm.undo.step import StepCheckpoint
from ducklm.undo.survey import RACY_S

FILES = 10_000
REPS = 15
READ = "cat pkg42/mod42.py"
WRITE = "sed -i 1s/^/x/ pkg7/mod7.py"  # changes the file every time
ROWS = {
    "quiet": f"read: {READ}, no write for 2 s",
    "read": f"read: {READ}",
    "write": f"write: {WRITE}",
    "outside": "the read after an outside edit",
}


def make_workspace(root: Path) -> None:
    """100 folders of 100 small source files (6 MB in all)."""
    for i in range(FILES // 100):
        folder = root / f"pkg{i}"
        folder.mkdir()
        for j in range(100):
            (folder / f"mod{j}.py").write_text(f"VALUE = {i * 100 + j}\n" * 50)


def edit_outside(root: Path) -> None:
    """A person's edit between two steps."""
    with (root / "pkg3" / "mod3.py").open("a") as file:
        file.write("# edited\n")


async def run_call(shell: ShellEnv, command: str) -> None:
    message = await shell_exec.ainvoke(
        {"type": "tool_call", "id": "b", "name": "shell_exec",
         "args": {"command": command, "shell": shell}}
    )  # fmt: skip
    assert message.artifact["exit_code"] == 0, message.text


async def plain(shell: ShellEnv, command: str) -> float:
    started = time.perf_counter()
    await run_call(shell, command)
    return time.perf_counter() - started


async def checkpointed(
    undo: WorkspaceUndo, runtime: Runtime[Any], ws: Path, shell: ShellEnv, command: str
) -> float:
    """The same call as the tool node runs it: a step's checkpoint around it."""
    started = time.perf_counter()
    step = StepCheckpoint(undo, runtime, ws, step=1)
    await step.before_call("b", {"command": command})
    await run_call(shell, command)
    facts = await step.after_call("b", "shell_exec", {"command": command})
    assert "undo_error" not in facts, facts
    assert bool(facts.get("changed_files")) == (command == WRITE), facts
    return time.perf_counter() - started


async def measure(
    undo: WorkspaceUndo, ws: Path, shell: ShellEnv
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Seconds per row: the calls alone, and the same calls with their checkpoint."""
    runtime: Runtime[Any] = Runtime(context=SimpleNamespace(events=lambda event: None))
    alone: dict[str, list[float]] = {k: [] for k in ROWS}
    times: dict[str, list[float]] = {k: [] for k in ROWS}

    async def both(name: str, command: str, edit: bool = False) -> None:
        alone[name].append(await plain(shell, command))
        if edit:
            await asyncio.to_thread(edit_outside, ws)
        times[name].append(await checkpointed(undo, runtime, ws, shell, command))

    for _ in range(REPS):
        await asyncio.sleep(RACY_S + 0.1)  # the files written last rep are not racy now
        await both("quiet", READ)
        await both("read", READ)
        # Checkpointed first: the write alone changes the file behind DuckLM's back,
        # which the next row's checkpoint finds along with the person's edit.
        times["write"].append(await checkpointed(undo, runtime, ws, shell, WRITE))
        alone["write"].append(await plain(shell, WRITE))
        await both("outside", READ, edit=True)
    return alone, times


async def main() -> None:
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        ws, data = Path(tmp) / "ws", Path(tmp) / "data"
        ws.mkdir()
        await asyncio.to_thread(make_workspace, ws)
        shell = ShellEnv(workspace=ws, protection=await detect_protection())
        undo = WorkspaceUndo(data / "undo", Limits(512 * 2**20, 32 * 2**20))
        started = time.perf_counter()
        await undo.snapshot(ws)
        first = time.perf_counter() - started
        alone, times = await measure(undo, ws, shell)
    header(
        "undo checkpoint cost per shell_exec",
        f"workspace: {FILES} files; {REPS} interleaved reps; protection {shell.protection}",
        "baseline: the same shell_exec without a checkpoint, in this run",
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs",
    )
    print(f"first checkpoint of the workspace (hashes all {FILES} files): {first * 1000:.0f} ms\n")
    rows = []
    for key, label in ROWS.items():
        base, full = median_ms(alone[key]), median_ms(times[key])
        rows.append([label, base, full, full - base, full / base])
    table(["call", "alone ms", "with checkpoint ms", "added ms", "with / alone"], rows)


if __name__ == "__main__":
    asyncio.run(main())
