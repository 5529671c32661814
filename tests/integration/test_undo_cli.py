"""`ducklm chat` then `ducklm undo`, as separate processes: the workspace ends exactly as
it was, and the CLI says clearly when it will not undo."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ducklm.config.settings import Settings
from tests.support.cli import cli_env, run_cli
from tests.support.disk import snapshot
from tests.support.scripted_llm import ScriptedLLM, call, reply

pytestmark = pytest.mark.slow

REPLACE = "find . -name '*.txt' -exec sed -i s/foo/bar/g {} +"
QUIET = ("--no-critic", "--no-memory")


@pytest.fixture
async def txt_files(workspace: Path) -> Path:
    def seed() -> None:
        (workspace / "a.txt").write_text("foo and foo\n")
        (workspace / "sub").mkdir()
        (workspace / "sub" / "b.txt").write_text("no match\nfoo\n")
        (workspace / "sub" / "b.txt").chmod(0o600)
        (workspace / "keep.md").write_text("foo stays\n")

    await asyncio.to_thread(seed)
    return workspace


async def test_chat_then_undo_leaves_the_workspace_exactly_as_it_was(
    settings: Settings, llm: ScriptedLLM, txt_files: Path, tmp_path: Path
) -> None:
    env = cli_env(settings)
    before = await snapshot(txt_files)
    llm.script(reply(tool_calls=[call("shell_exec", command=REPLACE)]))
    asked = await run_cli(
        "chat", "replace every 'foo' with 'bar' in the txt files", "--thread", "T1", *QUIET,
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert asked.code == 3, asked.stderr  # find -exec asks first
    llm.script(reply("Replaced."))
    done = await run_cli("resume", "T1", "--decision", "approve", *QUIET, env=env, cwd=tmp_path)
    assert done.code == 0, done.stderr
    assert "changed 2 file(s): a.txt, sub/b.txt (to roll back: ducklm undo T1 --to" in done.stderr
    assert await asyncio.to_thread((txt_files / "a.txt").read_text) == "bar and bar\n"

    dry = await run_cli("undo", "T1", "--dry-run", env=env, cwd=tmp_path)
    assert dry.code == 0, dry.stderr
    assert "-bar and bar" in dry.stdout and "+foo and foo" in dry.stdout
    assert "nothing changed" in dry.stdout
    assert (await snapshot(txt_files)) != before

    undone = await run_cli("undo", "T1", "--json", env=env, cwd=tmp_path)
    assert undone.code == 0, undone.stderr
    summary = json.loads(undone.stdout)
    assert {f["path"] for f in summary["files"]} == {"a.txt", "sub/b.txt"}
    assert await snapshot(txt_files) == before

    listed = await run_cli("undo", "T1", "--list", env=env, cwd=tmp_path)
    assert listed.code == 0, listed.stderr
    call_line, undo_line = listed.stdout.splitlines()
    assert call_line.endswith(f"reverted by {summary['undo_id']}")
    assert undo_line.startswith(summary["undo_id"]) and undo_line.endswith("live")


async def test_undo_refuses_with_a_reason_and_exit_code_2(
    settings: Settings, tmp_path: Path, txt_files: Path
) -> None:
    env = cli_env(settings)
    nothing = await run_cli("undo", "nobody", env=env, cwd=tmp_path)
    assert nothing.code == 2
    assert "no change" in nothing.stderr and "nobody" in nothing.stderr
    off = await run_cli("undo", "T1", env={**env, "DUCK_UNDO_MAX_BYTES": "0"}, cwd=tmp_path)
    assert off.code == 2 and "DUCK_UNDO_MAX_BYTES" in off.stderr
