"""A snapshot from what changed since the last one equals a snapshot made from scratch.

After a workspace's first snapshot, the next ones read only the files whose stat
signature changed, and those changed too recently for it to tell (`ducklm/undo/
survey.py`). Each change below, made right after a snapshot (in the same clock tick,
where the signature cannot tell) or long after one, must give the tree, modes, sizes
and left-out files that a fresh shadow repository gives; so must the next process,
which starts from the cache the last one saved.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ducklm.undo.service import WorkspaceUndo
from ducklm.undo.snapshot import Limits, Snapshot

LIMITS = Limits(max_bytes=10**8, max_file_bytes=1000)


def _same_size_edit(path: Path) -> None:
    """Other bytes, the same size and mtime: only the ctime tells."""
    before = path.stat()
    path.write_text(path.read_text().swapcase())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _to_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "inner.txt").write_text("inner\n")


def _create_deep(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "n.txt").write_text("n\n")


def _relink(path: Path) -> None:
    path.unlink()
    path.symlink_to("b.txt")


CHANGES: list[tuple[str, Callable[[Path], Any]]] = [
    ("same-size edit", lambda ws: _same_size_edit(ws / "a.txt")),
    ("chmod 600", lambda ws: (ws / "a.txt").chmod(0o600)),
    ("chmod 640 of another", lambda ws: (ws / "d" / "c.txt").chmod(0o640)),
    ("delete", lambda ws: (ws / "b.txt").unlink()),
    ("create in a new folder", lambda ws: _create_deep(ws / "new" / "deep")),
    ("file becomes a folder", lambda ws: _to_folder(ws / "d" / "c.txt")),
    ("link retargeted", lambda ws: _relink(ws / "link")),
    ("grows over the file limit", lambda ws: (ws / "a.txt").write_text("x" * 2000)),
    ("shrinks under it", lambda ws: (ws / "a.txt").write_text("small again\n")),
    ("an ignored file", lambda ws: (ws / "build.log").write_text("ignored\n")),
    ("gitignore changed", lambda ws: (ws / ".gitignore").write_text("")),
    ("an empty folder", lambda ws: (ws / "e" / "f").mkdir(parents=True)),
    ("a folder's mode", lambda ws: (ws / "d").chmod(0o700)),
    ("an empty folder goes", lambda ws: (ws / "e" / "f").rmdir()),
    ("nothing", lambda ws: None),
]


def _seed(ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\n")
    (ws / "b.txt").write_text("beta\n")
    (ws / "d").mkdir()
    (ws / "d" / "c.txt").write_text("gamma\n")
    (ws / "link").symlink_to("a.txt")
    (ws / ".gitignore").write_text("*.log\n")


def _facts(snap: Snapshot) -> tuple[Any, ...]:
    return (snap.tree, snap.modes, snap.files, snap.size, snap.left_out)


async def _from_scratch(tmp: Path, ws: Path) -> Snapshot:
    fresh = WorkspaceUndo(tmp / f"fresh-{os.urandom(4).hex()}", LIMITS)
    return await fresh.snapshot(ws, commit=False)


async def _git(ws: Path, *args: str) -> None:
    ident = ("-c", "user.name=Test", "-c", "user.email=test@localhost")
    proc = await asyncio.create_subprocess_exec("git", *ident, *args, cwd=ws)
    assert await proc.wait() == 0, args


async def test_each_change_right_after_a_snapshot_gives_what_a_fresh_repository_gives(
    tmp_path: Path, workspace: Path
) -> None:
    await asyncio.to_thread(_seed, workspace)
    undo = WorkspaceUndo(tmp_path / "warm", LIMITS)
    await undo.snapshot(workspace)
    for name, change in CHANGES:
        await asyncio.to_thread(change, workspace)
        warm = await undo.snapshot(workspace, commit=False)
        assert _facts(warm) == _facts(await _from_scratch(tmp_path, workspace)), name


async def test_changes_only_the_ctime_shows_are_seen_seconds_later(
    tmp_path: Path, workspace: Path
) -> None:
    await asyncio.to_thread(_seed, workspace)
    undo = WorkspaceUndo(tmp_path / "warm", LIMITS)
    await undo.snapshot(workspace)
    await asyncio.sleep(2.1)  # past the racy window: git's stat cache alone must see them
    await undo.snapshot(workspace)
    for _, change in CHANGES[:3]:
        await asyncio.to_thread(change, workspace)
    warm = await undo.snapshot(workspace, commit=False)
    assert _facts(warm) == _facts(await _from_scratch(tmp_path, workspace))
    assert warm.modes == {"a.txt": 0o600, "d/c.txt": 0o640}


async def test_a_nested_repository_and_its_new_commit_are_seen(
    tmp_path: Path, workspace: Path
) -> None:
    await asyncio.to_thread(_seed, workspace)
    undo = WorkspaceUndo(tmp_path / "warm", LIMITS)
    await undo.snapshot(workspace)
    sub = workspace / "sub"
    await asyncio.to_thread(sub.mkdir)
    await _git(sub, "init", "-q")
    await _git(sub, "commit", "-q", "--allow-empty", "-m", "one")
    for _ in range(2):
        warm = await undo.snapshot(workspace, commit=False)
        assert _facts(warm) == _facts(await _from_scratch(tmp_path, workspace))
        await _git(sub, "commit", "-q", "--allow-empty", "-m", "next")


async def test_the_next_process_starts_from_the_saved_cache(
    tmp_path: Path, workspace: Path
) -> None:
    await asyncio.to_thread(_seed, workspace)
    one = WorkspaceUndo(tmp_path / "undo", LIMITS)
    await one.snapshot(workspace)
    await asyncio.to_thread(_same_size_edit, workspace / "a.txt")
    two = WorkspaceUndo(tmp_path / "undo", LIMITS)  # another process: the same store
    warm = await two.snapshot(workspace, commit=False)
    assert _facts(warm) == _facts(await _from_scratch(tmp_path, workspace))
    await asyncio.to_thread((workspace / "b.txt").unlink)
    again = await one.snapshot(workspace, commit=False)  # its own cache is older: still right
    assert _facts(again) == _facts(await _from_scratch(tmp_path, workspace))
