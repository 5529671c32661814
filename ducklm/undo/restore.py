"""Put files back the way a snapshot had them, never touching anything outside the workspace.

Every path is walked from the workspace's directory descriptor without following links
(`ducklm.tools.workspace.open_parent`), so a folder swapped for a symlink fails the walk
instead of leading out. A file is written beside its name and renamed over it, with
its exact mode; a symlink is restored as the link itself. Blocking: run off the loop.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ducklm.tools.workspace import PathError, open_parent
from ducklm.undo.errors import UndoError

BAD_NAME = "the undo record names {path!r}, which is not a plain path inside the workspace"
NOW_A_FOLDER = "{path} is a folder now; move it away to restore the file"
CANNOT = "could not restore {path}: {why}"


@dataclass(frozen=True)
class FileState:
    """What one file should be: absent (`mode is None`), a file, or a symlink."""

    path: str
    mode: int | None
    data: bytes = b""
    link: bool = False


def restore_files(workspace: Path, states: list[FileState], folders_before: set[str]) -> None:
    """Make each file of `states` as it says, then remove folders the change created.

    Args:
        workspace: The resolved workspace.
        states: The files to restore or remove, relative to the workspace.
        folders_before: Folders that existed before the change (kept even when empty).

    Raises:
        UndoError: A path is not inside the workspace, or a file could not be written.
    """
    removed: list[str] = []
    for state in states:
        target = workspace / _checked(state.path)
        try:
            with open_parent(workspace, target, create=state.mode is not None) as folder:
                if state.mode is None:
                    _remove(folder, target.name, state.path)
                    removed.append(state.path)
                else:
                    _put(folder, target.name, state)
        except PathError as exc:
            raise UndoError(CANNOT.format(path=state.path, why=exc)) from None
        except OSError as exc:
            raise UndoError(CANNOT.format(path=state.path, why=exc.strerror)) from None
    _prune(workspace, removed, folders_before)


def _checked(path: str) -> PurePosixPath:
    parts = PurePosixPath(path).parts
    if not parts or path.startswith("/") or any(p in ("..", ".", ".git", "") for p in parts):
        raise UndoError(BAD_NAME.format(path=path))
    return PurePosixPath(*parts)


def _remove(folder: int, name: str, shown: str) -> None:
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        raise UndoError(NOW_A_FOLDER.format(path=shown))
    os.unlink(name, dir_fd=folder)


def _put(folder: int, name: str, state: FileState) -> None:
    with contextlib.suppress(FileNotFoundError):
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            raise UndoError(NOW_A_FOLDER.format(path=state.path))
    tmp = f".{name}.{secrets.token_hex(6)}.undo"
    try:
        if state.link:
            os.symlink(os.fsdecode(state.data), tmp, dir_fd=folder)
        else:
            _write(folder, tmp, state.data, state.mode or 0o644)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=folder)
        raise


def _write(folder: int, name: str, data: bytes, mode: int) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(name, flags, 0o600, dir_fd=folder)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fchmod(fh.fileno(), mode)  # exact, whatever the umask
        os.fsync(fh.fileno())


def _prune(workspace: Path, removed: list[str], folders_before: set[str]) -> None:
    """Remove folders left empty that did not exist before the change, deepest first."""
    candidates = {
        str(parent)
        for path in removed
        for parent in PurePosixPath(path).parents
        if str(parent) != "." and str(parent) not in folders_before
    }
    for folder in sorted(candidates, key=lambda p: -p.count("/")):
        target = workspace / folder
        with (
            contextlib.suppress(OSError, PathError),
            open_parent(workspace, target) as parent,
        ):
            os.rmdir(target.name, dir_fd=parent)
