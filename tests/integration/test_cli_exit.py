"""The `ducklm` command exits promptly once its run is done, review included.

In-process (no `ducklm serve`), a command that answered finishes the review behind the
answer and then closes DuckLM; nothing may keep the process alive long after `done`
printed (a person waited 29-48 s for the prompt after `ducklm resume`).

Why it lingers (stacks sampled every 5 s, issue 27): the review is done within a second
of `done`; then closing DuckLM waits for the episode writer (`EpisodeWriter.aclose`), whose
write of the resumed turn's messages is the process's first encode, so it loads torch,
sentence-transformers and the model first (10-60 s). `ducklm resume` embeds nothing
before (no new message: no prefetch, no recall), `ducklm chat` has loaded the model
during its turn. Until episode writes stop loading the model in a process that is about
to exit, the test is an expected failure.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from ducklm.config.settings import Settings
from tests.support.cli import cli_env, run_cli, start_cli
from tests.support.scripted_llm import ScriptedLLM, call, reply

pytestmark = pytest.mark.slow

EXIT_AFTER_DONE_S = 10.0
"""Generous: closing DuckLM takes about a second; the bug held the process 29-48 s."""


async def _timed_run(*args: str, env: dict[str, str], cwd: Path) -> tuple[int, float, str]:
    """Run `ducklm ARGS`: its exit code, seconds from its `done` line to its exit, stderr."""
    proc = await start_cli(*args, env=env, cwd=cwd)
    assert proc.stderr is not None and proc.stdout is not None
    done_at: float | None = None
    said: list[str] = []
    async with asyncio.timeout(240):
        while line := (await proc.stderr.readline()).decode():
            said.append(line)
            if done_at is None and "] thread " in line:  # `[completed] thread T2`
                done_at = time.monotonic()
        await proc.stdout.read()
        code = await proc.wait()
    exited_at = time.monotonic()
    assert done_at is not None, "".join(said)
    return code, exited_at - done_at, "".join(said)


async def test_resume_exits_promptly_after_done(
    settings: Settings, llm: ScriptedLLM, workspace: Path, tmp_path: Path
) -> None:
    critique = json.dumps({"score": 0.9, "summary": "fine"})
    llm.set_schema_replies(
        {"Critique": reply(critique), "MemoryProposal": reply(json.dumps({"should_store": False}))}
    )
    env = cli_env(settings, local_embeddings=True)
    llm.script(reply(tool_calls=[call("file_write", path="a.txt", content="new", overwrite=True)]))
    await asyncio.to_thread((workspace / "a.txt").write_text, "old")
    paused = await run_cli(
        "chat", "overwrite a.txt", "--thread", "T2", env=env, cwd=tmp_path, limit_s=240
    )
    assert paused.code == 3, paused.stderr

    llm.script(reply("Written."))
    code, lingered, stderr = await _timed_run(
        "resume", "T2", "--decision", "approve", env=env, cwd=tmp_path
    )
    assert code == 0, stderr
    assert await asyncio.to_thread((workspace / "a.txt").read_text) == "new"
    assert lingered < EXIT_AFTER_DONE_S, f"the process stayed {lingered:.1f} s after done"
