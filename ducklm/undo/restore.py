"""Put entries back the way a snapshot had them, never touching anything outside the workspace.

Every path is walked from the workspace's directory descriptor without following links
(`_parent`), so a folder swapped for a symlink fails the walk instead of leading out.
What must go goes first, deepest first (a folder the change made is empty by then);
then what must be, shallowest first: a file is written beside its name and renamed over
it with its exact mode, a symlink is restored as the link itself, a folder is made.
Folders get their exact modes last, deepest first, so a folder the change made
read-only is written into before it is closed again. Paths inside a nested repository's
`.git` are restored like any other. Blocking: run off the loop.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from ducklm.undo.errors import UndoError

BAD_NAME = "the undo record names {path!r}, which is not a plain path inside the workspace"
NOW_A_FOLDER = "{path} is a folder holding files no undone change made; move them away first"
CANNOT = "could not restore {path}: {why}"
MOVED = "folder {part!r} on the way is a symlink or a file now"
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
Kind = Literal["absent", "file", "link", "dir"]


@dataclass(frozen=True)
class EntryState:
    """What one path should be: absent, a file, a symlink (`data` its target) or a folder."""

    path: str
    kind: Kind
    mode: int = 0o644
    data: bytes = b""


def restore_entries(
    workspace: Path, states: list[EntryState], folders_before: dict[str, int]
) -> None:
    """Make each path of `states` as it says, then remove folders the changes left empty.

    Args:
        workspace: The resolved workspace.
        states: The paths to restore or remove, relative to the workspace.
        folders_before: Every folder of the snapshot restored to, with its exact mode:
            a missing one on the way is made with it; one not in it, left empty by a
            removal, goes.

    Raises:
        UndoError: A path is not inside the workspace, or could not be restored.
    """
    for state in states:
        _checked(state.path)
    made: set[str] = set()
    for state in sorted(states, key=_depth, reverse=True):
        with _parent(workspace, state.path, create=False, made=made) as folder:
            if folder is not None:
                _clear(folder, _name(state.path), state)
    for state in sorted(states, key=_depth):
        if state.kind == "absent":
            continue
        with _parent(workspace, state.path, create=True, made=made) as folder:
            assert folder is not None  # made on the way
            _put(folder, _name(state.path), state)
            if state.kind == "dir":
                made.add(state.path)
    _prune(workspace, [s.path for s in states if s.kind == "absent"], folders_before)
    modes = {p: folders_before.get(p, 0o755) for p in made}
    modes |= {s.path: s.mode for s in states if s.kind == "dir"}
    for path in sorted(modes, key=lambda p: -p.count("/")):
        with _parent(workspace, path, create=False, made=made) as folder:
            if folder is not None:
                _chmod_folder(folder, _name(path), modes[path])


def _depth(state: EntryState) -> int:
    return state.path.count("/")


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


@contextlib.contextmanager
def _parent(workspace: Path, path: str, *, create: bool, made: set[str]) -> Iterator[int | None]:
    """A descriptor of `path`'s folder, reached without following links; `None` if gone.

    Like `tools/workspace.py:open_parent`, but it says which folders it made (they get
    their snapshot's mode last) and reports a missing folder instead of failing.
    """
    parts = path.split("/")[:-1]
    try:
        fd = os.open(workspace, DIR_FLAGS)
    except OSError as exc:
        raise UndoError(CANNOT.format(path=path, why=exc.strerror)) from None
    try:
        for at, part in enumerate(parts):
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, mode=0o700, dir_fd=fd)
                    made.add("/".join(parts[: at + 1]))
            try:
                child = os.open(part, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if create:
                    raise
                yield None
                return
            except OSError:  # ELOOP: a symlink now; ENOTDIR: a file
                raise UndoError(CANNOT.format(path=path, why=MOVED.format(part=part))) from None
            os.close(fd)
            fd = child
        yield fd
    except OSError as exc:
        raise UndoError(CANNOT.format(path=path, why=exc.strerror)) from None
    finally:
        os.close(fd)


def _checked(path: str) -> None:
    parts = PurePosixPath(path).parts
    if not parts or path.startswith("/") or any(p in ("..", ".", "") for p in parts):
        raise UndoError(BAD_NAME.format(path=path))


def _clear(folder: int, name: str, state: EntryState) -> None:
    """Remove what stands at `name` unless it is already of the kind `state` wants."""
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return
    is_dir = stat.S_ISDIR(info.st_mode)
    if is_dir and state.kind == "dir":
        _chmod_folder(folder, name, stat.S_IMODE(info.st_mode) | 0o700)  # to write in it
        return
    if is_dir:
        try:
            os.rmdir(name, dir_fd=folder)
        except OSError:
            raise UndoError(NOW_A_FOLDER.format(path=state.path)) from None
    elif state.kind in ("absent", "dir"):
        os.unlink(name, dir_fd=folder)


def _chmod_folder(folder: int, name: str, mode: int) -> None:
    """Set a folder's mode through a descriptor: a symlink put in its place is not followed."""
    fd = os.open(name, DIR_FLAGS, dir_fd=folder)
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _put(folder: int, name: str, state: EntryState) -> None:
    if state.kind == "dir":
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, mode=0o700, dir_fd=folder)
        return
    tmp = f".{name[:200]}.{secrets.token_hex(6)}.undo"
    try:
        if state.kind == "link":
            os.symlink(os.fsdecode(state.data), tmp, dir_fd=folder)
        else:
            _write(folder, tmp, state.data, state.mode)
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


def _prune(workspace: Path, removed: list[str], folders_before: dict[str, int]) -> None:
    """Remove folders left empty that did not exist before the change, deepest first.

    Each chain of such folders is climbed from its deepest one with `..`, every step
    checked against the folder met on the way down: linear in the depth (a 1,100-deep
    tree made by one command is undone in one walk).
    """
    gone: set[str] = set()
    for path in sorted(removed, key=lambda p: -p.count("/")):
        parts = path.split("/")[:-1]
        if not parts or "/".join(parts) in folders_before or "/".join(parts) in gone:
            continue
        with contextlib.suppress(OSError):
            _climb(workspace, parts, folders_before, gone)


def _climb(workspace: Path, parts: list[str], keep: dict[str, int], gone: set[str]) -> None:
    """Rmdir `parts` and its parents up to the first folder in `keep` (or one not empty)."""
    fd = os.open(workspace, DIR_FLAGS)
    met = [os.fstat(fd)]
    try:
        for part in parts:
            child = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
            met.append(os.fstat(fd))
        for depth in range(len(parts), 0, -1):
            folder = "/".join(parts[:depth])
            if folder in keep or folder in gone:
                return
            up = os.open("..", DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = up
            here = os.fstat(fd)
            if (here.st_dev, here.st_ino) != (met[depth - 1].st_dev, met[depth - 1].st_ino):
                return  # moved while climbing: stop rather than guess
            os.rmdir(parts[depth - 1], dir_fd=fd)
            gone.add(folder)
    finally:
        os.close(fd)
