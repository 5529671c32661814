"""Undo covers every change: each family a hostile corpus found missed is recorded and undone.

Each family runs as one `shell_exec` through the graph and the real sandbox, every
question approved (git writes in a nested repository ask), and its undo must put the
workspace back byte for byte and mode for mode: folders (empty ones too) with their
modes, files of any size, ignored files, a nested repository's work tree and its whole
`.git` (refs, index, objects, config), a new repository, a call stopped by its timeout,
a 1,100-deep tree and 20,000 files from one brace expansion. The snapshot decides by
walking the workspace, not by a list of commands or `.gitignore`.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from ducklm.runtime.facade import DuckLM
from tests.support.scripted_llm import ScriptedLLM, call, reply

QUIET = {"critic": False, "memory": False}
GIT = "git -c user.name=T -c user.email=t@localhost"
DEEP = (
    "python3 -c \"import os\nos.mkdir('deep'); os.chdir('deep')\n"
    "for _ in range(1100): os.mkdir('d'); os.chdir('d')\nopen('leaf', 'w').write('x')\""
)

# Each family: the command, and one path its change record must name.
FAMILIES: dict[str, tuple[str, dict[str, Any], str]] = {
    "empty folders": ("mkdir -p empty/a/b", {}, "empty/a/b"),
    "a folder's mode": ("chmod 700 sub", {}, "sub"),
    "a folder removed": ("rm -rf sub", {}, "sub/inner/empty"),
    "append to a 40 MB file": ("printf tail >> big.bin", {}, "big.bin"),
    "an ignored file": ("echo more >> build/out.o && echo new > build/new.o", {}, "build/out.o"),
    "a nested repository": (
        f"cd repo && echo two > r.txt && {GIT} commit -qam two && {GIT} tag v1 && "
        f"{GIT} branch side && {GIT} notes add -m note HEAD && {GIT} gc -q",
        {},
        "repo/r.txt",
    ),
    "git init": ("git init -q fresh", {}, "fresh/.git/HEAD"),
    "stopped by its timeout": (
        "yes | head -c 3000000 > yes.txt; echo partial > part.txt; sleep 60",
        {"timeout_s": 1},
        "part.txt",
    ),
    "a 1,100-deep tree": (DEEP, {}, "deep/" + "d/" * 1100 + "leaf"),
    "20,000 files": ("mkdir many && cd many && touch f{1..20000}", {}, "many/f1"),
}


def tree_with_git(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry below `root`, every `.git` included: kind, exact mode, content digest.

    Iterative: os.walk recurses, and one family is 1,100 folders deep.
    """
    seen = {}
    folders = [""]
    while folders:
        folder = folders.pop()
        for entry in os.scandir(os.path.join(root, folder)):
            rel = os.path.join(folder, entry.name)
            mode = entry.stat(follow_symlinks=False).st_mode & 0o7777
            if entry.is_symlink():
                seen[rel] = ("link", 0, os.readlink(entry.path))
            elif entry.is_dir(follow_symlinks=False):
                seen[rel] = ("dir", mode, "")
                folders.append(rel)
            else:
                with open(entry.path, "rb") as file:
                    digest = hashlib.file_digest(file, "sha256").hexdigest()
                seen[rel] = ("file", mode, digest)
    return seen


async def _git(cwd: Path, *args: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        "git", "-c", "user.name=T", "-c", "user.email=t@localhost", *args, cwd=cwd
    )
    assert await proc.wait() == 0, args


def _seed(ws: Path) -> None:
    (ws / "sub" / "inner" / "empty").mkdir(parents=True)
    (ws / "sub").chmod(0o750)
    (ws / "sub" / "inner" / "f.txt").write_text("inner\n")
    (ws / "sub" / "inner" / "f.txt").chmod(0o600)
    with (ws / "big.bin").open("wb") as big:
        big.truncate(40 * 1024 * 1024)  # 40 MB, sparse: cheap to make
    (ws / ".gitignore").write_text("build/\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_bytes(b"\x7fELF object\n")
    (ws / "repo").mkdir()
    (ws / "repo" / "r.txt").write_text("one\n")


@pytest.fixture
async def seeded(workspace: Path) -> Path:
    await asyncio.to_thread(_seed, workspace)
    await _git(workspace / "repo", "init", "-q")
    await _git(workspace / "repo", "add", "r.txt")
    await _git(workspace / "repo", "commit", "-qm", "one")
    return workspace


async def run_command(
    duck: DuckLM, llm: ScriptedLLM, command: str, extra: dict[str, Any]
) -> dict[str, Any]:
    """One turn running `command`, every question approved; its `tool_call_finished`."""
    llm.script(reply(tool_calls=[call("shell_exec", command=command, **extra)]), reply("Done."))
    result = await duck.run("change things", thread_id="t1", **QUIET)
    while result.status == "interrupted":
        (pending,) = result.pending
        asked = pending["request"]["action_requests"]
        result = await duck.resume_run("t1", [{"type": "approve"}] * len(asked), **QUIET)
    assert result.status == "completed", result.events
    (finished,) = [e for e in result.events if e["type"] == "tool_call_finished"]
    return finished


@pytest.mark.parametrize("family", list(FAMILIES))
async def test_each_family_is_recorded_and_undone_byte_for_byte(
    duck: DuckLM, llm: ScriptedLLM, seeded: Path, family: str
) -> None:
    command, extra, named = FAMILIES[family]
    before = await asyncio.to_thread(tree_with_git, seeded)
    finished = await run_command(duck, llm, command, extra)
    assert finished.get("undo_id"), (family, finished.get("undo_error"), finished["output"])
    assert "undo_warning" not in finished, finished["undo_warning"]
    history = await duck.undo_history("t1")
    assert named in {c["path"] for c in history[-1]["changed"]}
    assert await asyncio.to_thread(tree_with_git, seeded) != before

    await duck.undo("t1")
    assert await asyncio.to_thread(tree_with_git, seeded) == before, family
