"""The file operations of their own (delete, move, copy, append) and how the policy asks."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ducklm.tools.commands.policy import load_command_policy
from ducklm.tools.errors import ToolError
from ducklm.tools.file_ops import file_append, file_copy, file_delete, file_move
from ducklm.tools.files import ExistingFile
from ducklm.tools.policy import PolicyEnv, assess, may_change_workspace

COMMANDS = load_command_policy()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "old.log").write_text("log\n")
    (root / "draft.txt").write_text("draft")
    (root / "final.txt").write_text("final\n")
    (root / "docs" / "a.md").write_text("a\n")
    return root


async def _run(tool: object, ws: Path, **args: object) -> str:
    return str(await tool.ainvoke({**args, "workspace": ws}))  # type: ignore[attr-defined]


def _read(path: Path) -> str:
    return path.read_text()


async def test_delete_removes_a_file_a_link_and_an_empty_folder(ws: Path) -> None:
    await asyncio.to_thread((ws / "link").symlink_to, ws / "final.txt")
    await asyncio.to_thread((ws / "empty").mkdir)
    assert await _run(file_delete, ws, path="old.log") == "deleted old.log"
    assert await _run(file_delete, ws, path="link") == "deleted link"
    assert await _run(file_delete, ws, path="empty/") == "deleted the empty folder empty"
    assert not await asyncio.to_thread((ws / "old.log").exists)
    assert not await asyncio.to_thread((ws / "empty").exists)
    assert await asyncio.to_thread(_read, ws / "final.txt") == "final\n", "the link's target stays"


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("docs", "is a folder that is not empty"),
        ("gone.txt", "no file or folder"),
        (".", "names no file"),
        ("../ws/old.log", "'..' is not allowed"),
    ],
)
async def test_delete_refuses_with_the_reason(ws: Path, path: str, why: str) -> None:
    with pytest.raises(ToolError, match=why):
        await _run(file_delete, ws, path=path)


async def test_move_renames_moves_into_a_folder_and_asks_before_replacing(ws: Path) -> None:
    assert await _run(file_move, ws, source="old.log", destination="new.log") == (
        "renamed old.log to new.log"
    )
    assert await _run(file_move, ws, source="new.log", destination="docs") == (
        "moved new.log to docs/new.log"
    )
    assert await _run(file_move, ws, source="docs/new.log", destination="archive/2024/") == (
        "moved docs/new.log to archive/2024/new.log"
    )
    with pytest.raises(ExistingFile, match="overwrite=true"):
        await _run(file_move, ws, source="draft.txt", destination="final.txt")
    done = await _run(file_move, ws, source="draft.txt", destination="final.txt", overwrite=True)
    assert done == "renamed draft.txt to final.txt (replacing it)"
    assert await asyncio.to_thread(_read, ws / "final.txt") == "draft"
    with pytest.raises(ToolError, match="into itself"):
        await _run(file_move, ws, source="docs", destination="docs/inner/")


async def test_copy_keeps_the_original(ws: Path) -> None:
    assert await _run(file_copy, ws, source="docs/a.md", destination="b.md") == (
        "copied docs/a.md to b.md"
    )
    assert await _run(file_copy, ws, source="b.md", destination="backup/") == (
        "copied b.md to backup/b.md"
    )
    assert await asyncio.to_thread(_read, ws / "docs" / "a.md") == "a\n"
    assert await asyncio.to_thread(_read, ws / "backup" / "b.md") == "a\n"
    with pytest.raises(ExistingFile, match="file_copy again with overwrite=true"):
        await _run(file_copy, ws, source="b.md", destination="final.txt")
    with pytest.raises(ToolError, match="copies one file"):
        await _run(file_copy, ws, source="docs", destination="docs2")


async def test_append_adds_a_line_of_its_own_and_keeps_the_rest(ws: Path) -> None:
    assert await _run(file_append, ws, path="draft.txt", text="more") == (
        "appended 1 line to draft.txt"
    )
    assert await _run(file_append, ws, path="final.txt", text="two\nthree\n") == (
        "appended 2 lines to final.txt"
    )
    await _run(file_append, ws, path="new/list.md", text="- first")
    assert await asyncio.to_thread(_read, ws / "draft.txt") == "draft\nmore\n"
    assert await asyncio.to_thread(_read, ws / "final.txt") == "final\ntwo\nthree\n"
    assert await asyncio.to_thread(_read, ws / "new" / "list.md") == "- first\n"


def test_each_operation_asks_as_its_class_requires(ws: Path) -> None:
    env = PolicyEnv(workspace=ws, commands=COMMANDS)
    delete = assess("file_delete", {"path": "old.log"}, env)
    assert (delete.action, delete.command_class, delete.rule_key) == (
        "ask",
        "destructive",
        "delete:old.log",
    )
    rename = assess("file_move", {"source": "draft.txt", "destination": "new.txt"}, env)
    assert (rename.action, rename.command_class, rename.replaced) == (
        "allow",
        "workspace_write",
        (),
    )
    onto = assess("file_move", {"source": "draft.txt", "destination": "final.txt"}, env)
    assert (onto.action, onto.overwrites, onto.replaced) == ("ask", True, ("final.txt",))
    assert onto.reason == "move replaces existing file final.txt"
    into = assess("file_copy", {"source": "draft.txt", "destination": "docs/"}, env)
    assert into.action == "allow"
    append = assess("file_append", {"path": "final.txt", "text": "x"}, env)
    assert append.action == "allow" and not append.overwrites
    write = assess("file_write", {"path": "final.txt", "content": "x"}, env)
    assert write.replaced == ("final.txt",)
    # every one of them changes the workspace: a checkpoint is taken first, for undo
    assert all(may_change_workspace(n, v) for n, v in [
        ("file_delete", delete), ("file_move", rename), ("file_append", append)])  # fmt: skip


def test_operations_guard_what_runs_by_itself_and_secrets(ws: Path) -> None:
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".env").write_text("KEY=1\n")
    env = PolicyEnv(workspace=ws, commands=COMMANDS)
    hook = assess("file_move", {"source": "draft.txt", "destination": ".git/hooks/pre-commit"}, env)
    assert hook.action == "ask" and "runs later without asking" in hook.reason
    secret = assess("file_copy", {"source": ".env", "destination": "public.txt"}, env)
    assert secret.action == "ask" and secret.secrets
    assert assess("file_delete", {"path": "../x"}, env).action == "allow", "the tool refuses it"
