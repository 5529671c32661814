"""Workspace confinement: every path a tool touches must stay inside the workspace.

Paths from the model are untrusted. Two layers:

1. `resolve_in_workspace` checks the name: no `..`, `~`, NUL bytes or absurd lengths, and
   the real path (symlinks followed, on both the root and the target) must lie inside
   the real workspace, so links that lead out and sibling folders that merely share a
   prefix are refused.
2. The file is then opened by walking from the workspace's directory descriptor one
   component at a time with `O_NOFOLLOW` (`open_parent`). If a folder is swapped for a
   symlink between the check and the open, the walk fails instead of following it out.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath

from ducklm.tools.errors import ToolError

MAX_PATH_CHARS = 1024

OUTSIDE_WORKSPACE = "path {path!r} is outside the workspace; use a path relative to it"
BAD_PATH = "path {path!r} is not usable: {why}"
MOVED = "path {path!r} changed while DuckLM was opening it; try again"
LOOP = "it is a loop of symbolic links"

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PathError(ToolError, ValueError):
    """A path the model gave cannot be used; the message is shown to the model."""


def resolve_in_workspace(workspace: Path, path: str) -> Path:
    """The real path of `path` inside `workspace`. Blocking (stat calls): run off the loop.

    Raises:
        PathError: The path is empty, too long, has a NUL byte, a `..` part or a leading
            `~`, or resolves outside the workspace.
    """
    if not path or not path.strip():
        raise PathError(BAD_PATH.format(path=path, why="it is empty"))
    if "\x00" in path:
        raise PathError(BAD_PATH.format(path=path, why="it contains a NUL byte"))
    if len(path) > MAX_PATH_CHARS:
        raise PathError(BAD_PATH.format(path=path[:40] + "...", why="it is too long"))
    if path.startswith("~"):
        raise PathError(OUTSIDE_WORKSPACE.format(path=path))
    if ".." in PurePosixPath(path).parts:
        raise PathError(BAD_PATH.format(path=path, why="'..' is not allowed"))
    root = workspace.resolve()
    try:
        target = (root / path).resolve()
    except RuntimeError:  # Python 3.11's word for ELOOP in a non-strict resolve
        raise PathError(BAD_PATH.format(path=path, why=LOOP)) from None
    except OSError as exc:
        raise PathError(BAD_PATH.format(path=path, why=os_reason(exc))) from None
    if not is_within(root, target):
        raise PathError(OUTSIDE_WORKSPACE.format(path=path))
    return target


def os_reason(exc: OSError) -> str:
    """An OS error as a plain reason for the model (`it is a loop of symbolic links`)."""
    if exc.errno == errno.ELOOP:
        return LOOP
    if exc.errno == errno.ENAMETOOLONG:
        return "it is too deep for the system to name"
    return os.strerror(exc.errno).lower() if exc.errno else "the system cannot use it"


def shown_name(name: str) -> str:
    r"""A file name as text the model and the person can read, whatever its bytes.

    A name that is not UTF-8 (`os.fsdecode` kept its bytes as surrogates, which no JSON or
    database takes) shows its odd bytes as backslash escapes (`caf\xe9.txt`).
    """
    return os.fsencode(name).decode("utf-8", errors="backslashreplace")


def is_within(root: Path, target: Path) -> bool:
    """Whether `target` is `root` or lies below it (compared by path parts, not text)."""
    return target == root or root in target.parents


def relative_name(workspace: Path, target: Path) -> str:
    """`target` as the model should see it: relative to the workspace, with `/`."""
    rel = target.relative_to(workspace.resolve())
    return rel.as_posix() or "."


@contextmanager
def open_parent(workspace: Path, target: Path, *, create: bool = False) -> Iterator[int]:
    """A descriptor of `target`'s folder, reached from the workspace without following links.

    `target` must come from `resolve_in_workspace`. With `create`, missing folders are
    made on the way. Blocking: run off the loop.

    Raises:
        PathError: A folder on the way is missing (without `create`), is not a folder, or
            became a symlink after the path was checked.
    """
    root = workspace.resolve()
    parts = target.relative_to(root).parts[:-1]
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts:
            child = _step(fd, part, create, str(target))
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _step(fd: int, part: str, create: bool, shown: str) -> int:
    """Open folder `part` below `fd` (which the caller keeps and closes)."""
    if create:
        with suppress(FileExistsError):
            os.mkdir(part, mode=0o755, dir_fd=fd)
    try:
        child = os.open(part, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        why = f"folder {part!r} does not exist"
        raise PathError(BAD_PATH.format(path=shown, why=why)) from None
    except OSError:
        # ELOOP: the folder is a symlink now; ENOTDIR: it is a file.
        raise PathError(MOVED.format(path=shown)) from None
    return child
