"""Workspace confinement: every path a tool touches must resolve inside the workspace.

Paths from the model are untrusted. They are resolved with symlinks followed, on both the
workspace root and the target, so `..`, absolute paths, `~` and links that lead out are
all refused the same way: by where they really end up.
"""

from __future__ import annotations

from pathlib import Path

MAX_PATH_CHARS = 1024

OUTSIDE_WORKSPACE = "path {path!r} is outside the workspace; use a path relative to it"
BAD_PATH = "path {path!r} is not usable: {why}"


class PathError(ValueError):
    """A path the model gave cannot be used; the message is shown to the model."""


def resolve_in_workspace(workspace: Path, path: str) -> Path:
    """The real path of `path` inside `workspace`. Blocking (stat calls): run off the loop.

    Raises:
        PathError: The path is empty, too long, has a NUL byte, starts with `~`, or
            resolves outside the workspace.
    """
    if not path or not path.strip():
        raise PathError(BAD_PATH.format(path=path, why="it is empty"))
    if "\x00" in path:
        raise PathError(BAD_PATH.format(path=path, why="it contains a NUL byte"))
    if len(path) > MAX_PATH_CHARS:
        raise PathError(BAD_PATH.format(path=path[:40] + "...", why="it is too long"))
    if path.startswith("~"):
        raise PathError(OUTSIDE_WORKSPACE.format(path=path))
    root = workspace.resolve()
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        raise PathError(OUTSIDE_WORKSPACE.format(path=path))
    return target


def relative_name(workspace: Path, target: Path) -> str:
    """`target` as the model should see it: relative to the workspace, with `/`."""
    rel = target.relative_to(workspace.resolve())
    return rel.as_posix() or "."
