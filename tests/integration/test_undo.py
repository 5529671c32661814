"""Undo through the whole graph: the scripted model changes the workspace with real tools
in the real sandbox, and undo puts every byte (and mode) back, proven on disk."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM, RunResult
from ducklm.undo import UndoError, UndoRefused
from tests.integration.test_coder_graph import Model as CoderModel
from tests.support.disk import snapshot
from tests.support.scripted_llm import ScriptedLLM, ToolCallSpec, call, reply

QUIET = {"critic": False, "memory": False}


def shell(command: str, call_id: str | None = None) -> ToolCallSpec:
    spec = call("shell_exec", command=command)
    spec.id = call_id
    return spec


async def turn(
    duck: DuckLM, llm: ScriptedLLM, *calls: ToolCallSpec, thread: str = "t1"
) -> RunResult:
    """One turn making `calls`, every question approved."""
    llm.script(reply(tool_calls=list(calls)), reply("Done."))
    result = await duck.run("change things", thread_id=thread, **QUIET)
    while result.status == "interrupted":
        (pending,) = result.pending
        asked = pending["request"]["action_requests"]
        result = await duck.resume_run(thread, [{"type": "approve"}] * len(asked), **QUIET)
    assert result.status == "completed", result.events
    return result


def finished(result: RunResult) -> list[dict[str, Any]]:
    return [e for e in result.events if e["type"] == "tool_call_finished"]


@pytest.fixture
async def seeded(workspace: Path) -> Path:
    def seed() -> None:
        (workspace / "notes.md").write_bytes(b"a line\r\nand another a\n")
        (workspace / "notes.md").chmod(0o640)
        (workspace / "run.sh").write_text("#!/bin/sh\necho a\n")
        (workspace / "run.sh").chmod(0o750)
        (workspace / "docs").mkdir()
        for i in range(3):
            (workspace / "docs" / f"p{i}.txt").write_text(f"foo {i}\nfoo foo\n")
        (workspace / ".gitattributes").write_text("* text eol=crlf\n")

    await asyncio.to_thread(seed)
    return workspace


async def test_sed_in_place_is_undone_byte_for_byte_with_its_mode(
    duck: DuckLM, llm: ScriptedLLM, seeded: Path
) -> None:
    before = await snapshot(seeded)
    result = await turn(duck, llm, shell("sed -i s/a/b/g notes.md run.sh"))
    (event,) = finished(result)
    assert event["status"] == "success", event["output"]
    assert {c["path"] for c in event["changed_files"]} == {"notes.md", "run.sh"}
    checkpoint = [e for e in result.events if e["type"] == "workspace_checkpoint"]
    assert checkpoint[0]["status"] == "taken"
    assert await snapshot(seeded) != before

    undone = await duck.undo("t1")
    assert await snapshot(seeded) == before
    assert {f["path"]: f["action"] for f in undone.plan.summary()["files"]} == {
        "notes.md": "restored",
        "run.sh": "restored",
    }


async def test_truncation_creation_and_deletion_after_approval_are_undone(
    duck: DuckLM, llm: ScriptedLLM, seeded: Path
) -> None:
    before = await snapshot(seeded)
    await turn(
        duck,
        llm,
        shell("echo x > notes.md"),
        shell("mkdir -p new/deep && echo hi > new/deep/made.txt"),
        shell("rm run.sh"),  # destructive: asks, approved
    )
    assert not await asyncio.to_thread((seeded / "run.sh").exists)
    await duck.undo("t1")
    assert await snapshot(seeded) == before, "created folders go too"


async def test_whole_tree_command_and_file_write_undo_to_a_call(
    duck: DuckLM, llm: ScriptedLLM, seeded: Path
) -> None:
    original = await snapshot(seeded)
    await turn(duck, llm, shell("find . -name '*.txt' -exec sed -i s/foo/bar/g {} +", "c-find"))
    after_find = await snapshot(seeded)
    assert after_find != original
    write = call("file_write", path="docs/p0.txt", content="mine\n", overwrite=True)
    write.id = "c-write"
    await turn(duck, llm, write)
    assert await asyncio.to_thread((seeded / "docs/p0.txt").read_text) == "mine\n"

    await duck.undo("t1", to_call="c-write")
    assert await snapshot(seeded) == after_find
    await duck.undo("t1", to_call="c-find")
    assert await snapshot(seeded) == original


async def test_undo_survives_a_restart_and_can_itself_be_undone(
    settings: Settings, llm: ScriptedLLM, seeded: Path
) -> None:
    before = await snapshot(seeded)
    async with DuckLM.open(settings) as duck:
        await turn(duck, llm, shell("sed -i s/foo/baz/ docs/p1.txt && echo new > fresh.txt"))
    changed = await snapshot(seeded)
    async with DuckLM.open(settings) as duck:
        dry = await duck.undo("t1", dry_run=True)
        assert "fresh.txt" in dry.plan.diff and "-baz 1" in dry.plan.diff
        assert await snapshot(seeded) == changed, "a dry run changes nothing"
        await duck.undo("t1")
        assert await snapshot(seeded) == before
        events = [r.data for r in await duck.events("t1") if r.type == "undo_applied"]
        assert len(events) == 1
        assert {f["path"] for f in events[0]["files"]} == {"docs/p1.txt", "fresh.txt"}
        await duck.undo("t1")  # the undo was the last change: undoing it redoes
        assert await snapshot(seeded) == changed


@pytest.mark.parametrize(
    "outside_change",
    [
        lambda ws: (ws / "notes.md").write_text("my own edit\n"),
        lambda ws: (ws / "notes.md").chmod(0o600),
        lambda ws: (ws / "notes.md").unlink(),
    ],
    ids=["edited", "chmod", "deleted"],
)
async def test_undo_refuses_after_an_outside_change_unless_forced(
    duck: DuckLM, llm: ScriptedLLM, seeded: Path, outside_change: Callable[[Path], Any]
) -> None:
    before = await snapshot(seeded)
    await turn(duck, llm, shell("sed -i s/a/b/ notes.md"))
    await asyncio.to_thread(outside_change, seeded)
    touched = await snapshot(seeded)
    with pytest.raises(UndoRefused) as refused:
        await duck.undo("t1")
    assert refused.value.paths == ["notes.md"]
    assert "--force" in str(refused.value)
    assert await snapshot(seeded) == touched, "a refused undo touches nothing"
    await duck.undo("t1", force=True)
    assert await snapshot(seeded) == before


async def test_undo_never_writes_through_a_link_out_of_the_workspace(
    duck: DuckLM, llm: ScriptedLLM, seeded: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    await asyncio.to_thread(outside.mkdir)
    await asyncio.to_thread((outside / "p0.txt").write_text, "canary\n")
    await turn(duck, llm, shell("sed -i s/foo/bar/ docs/p0.txt"))

    def swap() -> None:  # the folder becomes a link that leads out
        (seeded / "docs").rename(seeded / "docs.moved")
        (seeded / "docs").symlink_to(outside)

    await asyncio.to_thread(swap)
    with pytest.raises(UndoError):
        await duck.undo("t1", force=True)
    assert await asyncio.to_thread((outside / "p0.txt").read_text) == "canary\n"


async def test_a_read_records_no_change_and_nothing_to_undo_is_said(
    duck: DuckLM, llm: ScriptedLLM, seeded: Path
) -> None:
    result = await turn(duck, llm, shell("cat notes.md"), call("file_read", path="notes.md"))
    # Every shell command is checkpointed, its class whatever it is; a read changes nothing.
    (checkpoint,) = [e for e in result.events if e["type"] == "workspace_checkpoint"]
    assert checkpoint["status"] == "taken"
    assert [e.get("changed_files") for e in finished(result)] == [None, None]
    with pytest.raises(UndoError, match="no change"):
        await duck.undo("t1")


async def test_an_ignored_file_is_undone_and_an_oversized_one_is_said_plainly(
    settings: Settings, llm: ScriptedLLM, workspace: Path
) -> None:
    settings = settings.model_copy(update={"undo_max_file_bytes": 1000})

    def seed() -> None:
        (workspace / ".gitignore").write_text("build/\n")
        (workspace / "build").mkdir()
        (workspace / "build" / "out.o").write_text("object")
        (workspace / "big.bin").write_bytes(b"x" * 5000)
        (workspace / "small.txt").write_text("small")

    await asyncio.to_thread(seed)
    async with DuckLM.open(settings) as duck:
        command = "echo y > small.txt && echo y > build/out.o && echo more >> big.bin"
        result = await turn(duck, llm, shell(command))
        (checkpoint,) = [e for e in result.events if e["type"] == "workspace_checkpoint"]
        assert checkpoint["left_out"] == ["big.bin"]
        (event,) = finished(result)
        changed = [c["path"] for c in event["changed_files"]]
        assert changed == ["big.bin", "build/out.o", "small.txt"]
        assert "big.bin" in event["undo_warning"] and "cannot put it back" in event["undo_warning"]
        undone = await duck.undo("t1")
        assert undone.plan.lost == ["big.bin"]
    assert await asyncio.to_thread((workspace / "small.txt").read_text) == "small"
    assert await asyncio.to_thread((workspace / "build" / "out.o").read_text) == "object"
    assert await asyncio.to_thread((workspace / "big.bin").read_bytes) == b"x" * 5000 + b"more\n"


async def test_the_shadow_repository_is_private_and_the_workspace_git_untouched(
    duck: DuckLM, llm: ScriptedLLM, seeded: Path, settings: Settings
) -> None:
    proc = await asyncio.create_subprocess_exec("git", "init", "-q", str(seeded))
    await proc.wait()
    own_git = await snapshot(seeded / ".git")
    await turn(duck, llm, shell("sed -i s/a/b/ notes.md"))
    await duck.undo("t1")
    assert await snapshot(seeded / ".git") == own_git
    mode = (await asyncio.to_thread((settings.data_dir / "undo").stat)).st_mode
    assert mode & 0o777 == 0o700


async def test_a_coder_refactor_is_undone(duck: DuckLM, llm: ScriptedLLM, workspace: Path) -> None:
    model = CoderModel()
    llm.set_responder(model)
    target = workspace / "calc.py"
    await asyncio.to_thread(target.write_text, "def add(a, b):\n    return a - b\n")
    await asyncio.to_thread(target.chmod, 0o755)
    before = await snapshot(workspace)
    refactor = call("refactor_code", path="calc.py", instructions="make add add")
    model.actions.extend([reply(tool_calls=[refactor]), reply("Refactored.")])
    model.code.append({"content": "def add(a, b):\n    return a + b\n", "explanation": "plus"})
    paused = await duck.run("Refactor calc.py so add adds", thread_id="t1", **QUIET)
    assert paused.status == "interrupted"  # an existing file: the diff is asked about
    done = await duck.resume_run("t1", [{"type": "approve"}], **QUIET)
    (event,) = finished(done)
    assert event["changed_files"] == [{"path": "calc.py", "change": "modified"}]
    await duck.undo("t1", to_call=event["call_id"])
    assert await snapshot(workspace) == before
