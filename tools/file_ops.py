"""File operations of their own: delete, move (rename), copy and append.

Without them a small model asked to delete, rename or append reached for `file_write`,
which replaced the file's content and did none of those (issue 44). Each tool does one
thing a person names, so its card says what will happen and the policy asks as the
operation's class requires (`tools/policy.py`: a delete is destructive, a move or copy
onto an existing file is an overwrite, an append is neither). Every call changes the
workspace, so the tool step takes a checkpoint first and records the change for undo.

The docstrings are what the model reads; the workspace and the deadline are injected.
Paths are confined as for the other file tools (`tools/workspace.py`); the last part of
a path is used as it is named, so deleting or moving a link acts on the link, never on
what it points to.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Annotated

from langchain_core.tools import InjectedToolArg, tool

from ducklm.tools.errors import ToolError
from ducklm.tools.file_threads import run_file_work
from ducklm.tools.files import (
    MAX_WRITE_CHARS,
    NOT_FOUND,
    TOO_LARGE,
    ExistingFile,
    open_regular,
    write_bytes,
)
from ducklm.tools.workspace import (
    BAD_PATH,
    PathError,
    open_parent,
    relative_name,
    resolve_in_workspace,
)

TARGET_EXISTS = (
    "{path!r} already exists; call {tool} again with overwrite=true to replace it "
    "(the user will be asked to approve)"
)
FULL_FOLDER = (
    "{path!r} is a folder that is not empty; delete the files in it first (each one "
    "asks), or ask the user"
)
NOT_A_FILE_COPY = "{path!r} is a folder; file_copy copies one file"
SAME_PATH = "{source!r} and {destination!r} are the same path"
WORKSPACE_ITSELF = "the workspace itself cannot be {verb}"
INTO_ITSELF = "{source!r} cannot be moved into itself"
TOO_BIG = "{path!r} would be larger than {limit} bytes, the most these tools handle"
MAX_BYTES = 4_000_000
"""The largest file a copy or an append reads and writes whole."""


@tool(parse_docstring=True)
async def file_delete(  # noqa: D417  workspace and timeout_s are injected, not the model's
    path: str,
    workspace: Annotated[Path, InjectedToolArg],
    timeout_s: Annotated[float | None, InjectedToolArg] = None,
) -> str:
    """Delete a file (or an empty folder) in the workspace. Use this to delete or remove.

    Args:
        path: Path relative to the workspace of the file to delete.
    """
    return await run_file_work("file_delete", timeout_s, delete_path, workspace, path)


@tool(parse_docstring=True)
async def file_move(  # noqa: D417  workspace and timeout_s are injected, not the model's
    source: str,
    destination: str,
    workspace: Annotated[Path, InjectedToolArg],
    overwrite: bool = False,
    timeout_s: Annotated[float | None, InjectedToolArg] = None,
) -> str:
    """Rename or move a file or folder in the workspace. Use this to rename or move.

    Args:
        source: The current path, relative to the workspace.
        destination: The new path, or a folder to move it into.
        overwrite: Replace a file already at the destination (the user is asked first).
    """
    return await run_file_work(
        "file_move", timeout_s, move_path, workspace, source, destination, overwrite
    )


@tool(parse_docstring=True)
async def file_copy(  # noqa: D417  workspace and timeout_s are injected, not the model's
    source: str,
    destination: str,
    workspace: Annotated[Path, InjectedToolArg],
    overwrite: bool = False,
    timeout_s: Annotated[float | None, InjectedToolArg] = None,
) -> str:
    """Copy a file in the workspace; the original stays as it is.

    Args:
        source: The file to copy, relative to the workspace.
        destination: The path of the copy, or a folder to copy it into.
        overwrite: Replace a file already at the destination (the user is asked first).
    """
    return await run_file_work(
        "file_copy", timeout_s, copy_file, workspace, source, destination, overwrite
    )


@tool(parse_docstring=True)
async def file_append(  # noqa: D417  workspace and timeout_s are injected, not the model's
    path: str,
    text: str,
    workspace: Annotated[Path, InjectedToolArg],
    timeout_s: Annotated[float | None, InjectedToolArg] = None,
) -> str:
    """Add text at the end of a file, keeping what it holds (creates the file if missing).

    Args:
        path: File path relative to the workspace.
        text: The text to add; it goes on a line of its own.
    """
    return await run_file_work("file_append", timeout_s, append_text, workspace, path, text)


FILE_OP_TOOLS = (file_delete, file_move, file_copy, file_append)
FILE_OP_NAMES = frozenset(t.name for t in FILE_OP_TOOLS)


def named_path(workspace: Path, path: str) -> Path:
    """`path` in the workspace with its folder resolved and its last part as named.

    The last part is not followed: a link is the link. Blocking.

    Raises:
        PathError: As `resolve_in_workspace`, or the path is the workspace itself.
    """
    resolve_in_workspace(workspace, path)  # the name's own checks (.., ~, NUL, length)
    name = Path(path)
    folder = resolve_in_workspace(workspace, str(name.parent) if str(name.parent) else ".")
    if name.name in ("", "."):
        raise PathError(BAD_PATH.format(path=path, why="it names no file"))
    return folder / name.name


def delete_path(workspace: Path, path: str) -> str:
    """Delete the file, link or empty folder at `path`; what was done. Blocking.

    Raises:
        ToolError: Nothing there, a folder with content, or the workspace itself.
    """
    target = named_path(workspace, path)
    rel = relative_name(workspace, target)
    with open_parent(workspace, target) as folder:
        info = _lstat(folder, target.name, path)
        try:
            if stat.S_ISDIR(info.st_mode):
                os.rmdir(target.name, dir_fd=folder)
                return f"deleted the empty folder {rel}"
            os.unlink(target.name, dir_fd=folder)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise ToolError(FULL_FOLDER.format(path=rel)) from None
            raise ToolError(BAD_PATH.format(path=path, why=os.strerror(exc.errno or 0))) from None
    return f"deleted {rel}"


def move_path(workspace: Path, source: str, destination: str, overwrite: bool) -> str:
    """Move (rename) `source` to `destination`, or into it if it is a folder. Blocking.

    Raises:
        ExistingFile: A file is at the destination and `overwrite` is off.
        ToolError: No source, the same path, a folder into itself, or outside the workspace.
    """
    src = named_path(workspace, source)
    dst = destination_of(workspace, src, destination)
    src_rel, dst_rel = relative_name(workspace, src), relative_name(workspace, dst)
    if src == dst:
        raise ToolError(SAME_PATH.format(source=source, destination=destination))
    if src in dst.parents:
        raise ToolError(INTO_ITSELF.format(source=src_rel))
    with open_parent(workspace, src) as src_dir:
        _lstat(src_dir, src.name, source)
        with open_parent(workspace, dst, create=True) as dst_dir:
            replaced = _check_target(dst_dir, dst.name, dst_rel, "file_move", overwrite)
            os.rename(src.name, dst.name, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
    done = "moved" if src.parent != dst.parent else "renamed"
    return f"{done} {src_rel} to {dst_rel}" + (" (replacing it)" if replaced else "")


def copy_file(workspace: Path, source: str, destination: str, overwrite: bool) -> str:
    """Copy the file `source` to `destination`, or into it if it is a folder. Blocking.

    Raises:
        ExistingFile: A file is at the destination and `overwrite` is off.
        ToolError: No source file, a folder, the same path, or outside the workspace.
    """
    src = resolve_in_workspace(workspace, source)
    if src.is_dir():
        raise ToolError(NOT_A_FILE_COPY.format(path=source))
    with os.fdopen(open_regular(workspace, src, shown=source), "rb") as fh:
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ToolError(TOO_BIG.format(path=source, limit=MAX_BYTES))
    dst = destination_of(workspace, src, destination)
    if dst == src:
        raise ToolError(SAME_PATH.format(source=source, destination=destination))
    dst_rel = relative_name(workspace, dst)
    try:
        verb, rel = write_bytes(workspace, dst_rel, data, overwrite)
    except ExistingFile:
        raise ExistingFile(TARGET_EXISTS.format(path=dst_rel, tool="file_copy")) from None
    tail = " (replacing it)" if verb == "replaced" else ""
    return f"copied {relative_name(workspace, src)} to {rel}{tail}"


def append_text(workspace: Path, path: str, text: str) -> str:
    """Add `text` on a line of its own at the end of `path`; what was done. Blocking.

    The file is written whole and renamed over the old one, as `file_write` does, so a
    failed append never leaves half a line.

    Raises:
        ToolError: Too large, a folder, not a regular file, or outside the workspace.
    """
    target = resolve_in_workspace(workspace, path)
    before = b""
    if target.exists() or target.is_symlink():
        with os.fdopen(open_regular(workspace, target, shown=path), "rb") as fh:
            before = fh.read(MAX_BYTES + 1)
    added = text if text.endswith("\n") else text + "\n"
    if before and not before.endswith(b"\n"):
        added = "\n" + added
    if len(added) > MAX_WRITE_CHARS:
        raise ToolError(TOO_LARGE.format(size=len(added), limit=MAX_WRITE_CHARS))
    data = before + added.encode("utf-8")
    if len(data) > MAX_BYTES:
        raise ToolError(TOO_BIG.format(path=path, limit=MAX_BYTES))
    _, rel = write_bytes(workspace, path, data, overwrite=True)
    lines = text.count("\n") + (not text.endswith("\n"))
    return f"appended {lines} line{'s' if lines != 1 else ''} to {rel}"


def destination_of(workspace: Path, src: Path, destination: str) -> Path:
    """Where `src` goes: `destination`, or inside it when it is a folder (as `mv` does).

    Blocking. The policy asks the same question before the call (`tools/policy.py`).
    """
    if destination.strip().rstrip("/") in ("", "."):
        return workspace.resolve() / src.name
    dst = named_path(workspace, destination)
    into = destination.endswith("/") or (dst.is_dir() and not dst.is_symlink())
    return dst / src.name if into else dst


def _lstat(folder: int, name: str, shown: str) -> os.stat_result:
    try:
        return os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        raise ToolError(NOT_FOUND.format(path=shown)) from None


def _check_target(folder: int, name: str, rel: str, tool_name: str, overwrite: bool) -> bool:
    """Whether a file is at the destination (and may be replaced). Blocking.

    Raises:
        ExistingFile: It is there and `overwrite` is off.
        ToolError: A folder is there (a move never replaces a folder).
    """
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(BAD_PATH.format(path=rel, why="a folder of that name is there"))
    if not overwrite:
        raise ExistingFile(TARGET_EXISTS.format(path=rel, tool=tool_name))
    return True
