"""File tools: read, write, list and search inside the workspace.

The docstrings are what the model reads. The workspace and the deadline are injected by
the tool node, never filled by the model. File system work runs on a thread of its own
with a deadline (`tools/file_threads.py`), so neither the event loop nor the shared
executor ever waits on a disk that does not answer.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

from langchain_core.tools import InjectedToolArg, tool

from ducklm.tools.errors import ToolError
from ducklm.tools.file_threads import run_file_work
from ducklm.tools.secret_scan.names import is_secret_name
from ducklm.tools.workspace import (
    MOVED,
    open_parent,
    os_reason,
    relative_name,
    resolve_in_workspace,
    shown_name,
)

MAX_READ_CHARS = 200_000
MAX_WRITE_CHARS = 1_000_000
MAX_LIST_ENTRIES = 500
MAX_SEARCH_MATCHES = 100
MAX_SEARCH_FILE_BYTES = 2_000_000
SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv"})
# O_NONBLOCK: opening a FIFO for reading would wait for a writer, holding a worker
# thread for good; with it the open returns and the fstat check refuses the FIFO. (The
# tests of the deadline drop it to block for real: tests/support/hung_files.py.)
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

NOT_FOUND = "no file or folder at {path!r}"
NOT_A_FILE = "{path!r} is a folder, not a file; use list_dir to see what it holds"
NOT_A_DIR = "{path!r} is a file, not a folder; use file_read to read it"
NOT_TEXT = "{path!r} is not a UTF-8 text file"
BAD_FOLDER = "folder {path!r} cannot be listed: {why}"
NOT_REGULAR = "{path!r} is not a regular file (a FIFO, socket or device), so it is not read"
FILE_EXISTS = (
    "{path!r} already exists; call file_write again with overwrite=true to replace it "
    "(the user will be asked to approve)"
)
TOO_LARGE = "content is {size} characters; the limit is {limit}"
BAD_GLOB = "glob {glob!r} must stay inside the workspace (no absolute paths or '..')"


class ExistingFile(ToolError):
    """The file is there and the caller did not ask to replace it."""


@tool(parse_docstring=True)
async def file_read(  # noqa: D417  workspace and timeout_s are injected, not the model's
    path: str,
    workspace: Annotated[Path, InjectedToolArg],
    timeout_s: Annotated[float | None, InjectedToolArg] = None,
) -> str:
    """Read a UTF-8 text file in the workspace.

    Args:
        path: File path relative to the workspace, e.g. "notes/todo.md".
    """
    return await run_file_work("file_read", timeout_s, _read, workspace, path)


@tool(parse_docstring=True)
async def file_write(  # noqa: D417  workspace and timeout_s are injected, not the model's
    path: str,
    content: str,
    workspace: Annotated[Path, InjectedToolArg],
    overwrite: bool = False,
    timeout_s: Annotated[float | None, InjectedToolArg] = None,
) -> str:
    """Write a UTF-8 text file in the workspace, creating folders as needed.

    Args:
        path: File path relative to the workspace.
        content: The full new text of the file.
        overwrite: Replace the file if it already exists (the user is asked first).
    """
    return await run_file_work(
        "file_write", timeout_s, write_text, workspace, path, content, overwrite
    )


@tool(parse_docstring=True)
async def list_dir(  # noqa: D417  workspace and timeout_s are injected, not the model's
    workspace: Annotated[Path, InjectedToolArg],
    path: str = ".",
    timeout_s: Annotated[float | None, InjectedToolArg] = None,
) -> str:
    """List the files and folders in a workspace folder.

    Args:
        path: Folder path relative to the workspace; "." is the workspace itself.
    """
    return await run_file_work("list_dir", timeout_s, _list, workspace, path)


@tool(parse_docstring=True)
async def search_files(  # noqa: D417  workspace and timeout_s are injected, not the model's
    query: str,
    workspace: Annotated[Path, InjectedToolArg],
    glob: str = "**/*",
    case_sensitive: bool = False,
    *,
    timeout_s: Annotated[float | None, InjectedToolArg] = None,
    secret_names: Annotated[tuple[str, ...], InjectedToolArg] = (),
) -> str:
    """Find lines containing a text in the workspace's files.

    Args:
        query: The text to look for.
        glob: Which files to search, e.g. "**/*.py" or "docs/*.md".
        case_sensitive: Match upper and lower case exactly.
    """
    return await run_file_work(
        "search_files", timeout_s, _search, workspace, query, glob, case_sensitive, secret_names
    )


FILE_TOOLS = (file_read, file_write, list_dir, search_files)


def _read(workspace: Path, path: str) -> str:
    target = resolve_in_workspace(workspace, path)
    text = read_file_text(workspace, target, shown=path)
    if len(text) > MAX_READ_CHARS:
        return text[:MAX_READ_CHARS] + f"\n[... cut: longer than {MAX_READ_CHARS} chars]"
    return text


def read_file_text(workspace: Path, target: Path, *, shown: str, newline: str | None = None) -> str:
    """The text of `target` (resolved inside `workspace`), at most MAX_READ_CHARS + 1 chars.

    Blocking. Opened without following links, so a path swapped for a symlink after the
    check is refused; `shown` is the name the error messages use; `newline=""` keeps the
    file's line endings as they are.

    Raises:
        ToolError: A folder, no file, a link, a FIFO, socket or device, or a non-UTF-8
            file.
    """
    with os.fdopen(
        open_regular(workspace, target, shown=shown), encoding="utf-8", newline=newline
    ) as fh:
        try:
            return fh.read(MAX_READ_CHARS + 1)
        except UnicodeDecodeError:
            raise ToolError(NOT_TEXT.format(path=shown)) from None


def open_regular(workspace: Path, target: Path, *, shown: str) -> int:
    """A read-only descriptor of the regular file `target` (resolved inside `workspace`).

    Blocking. Reached from the workspace without following links; the caller closes it.

    Raises:
        ToolError: A folder, no file, a link, a FIFO, socket or device.
    """
    if target.is_dir():
        raise ToolError(NOT_A_FILE.format(path=shown))
    with open_parent(workspace, target) as folder:
        try:
            fd = os.open(target.name, _READ_FLAGS, dir_fd=folder)
        except FileNotFoundError:
            raise ToolError(NOT_FOUND.format(path=shown)) from None
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # a socket: nothing to open
                raise ToolError(NOT_REGULAR.format(path=shown)) from None
            raise ToolError(MOVED.format(path=shown)) from None  # ELOOP: now a symlink
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ToolError(NOT_REGULAR.format(path=shown))
    return fd


def write_text(workspace: Path, path: str, content: str, overwrite: bool) -> str:
    """Write `content` to `path` in the workspace, atomically; what was done. Blocking.

    Raises:
        ToolError: Too large, outside the workspace, a folder, or an existing file
            without `overwrite`.
    """
    if len(content) > MAX_WRITE_CHARS:
        raise ToolError(TOO_LARGE.format(size=len(content), limit=MAX_WRITE_CHARS))
    verb, rel = write_bytes(workspace, path, content.encode("utf-8"), overwrite)
    return f"{verb} {rel} ({len(content)} chars)"


def write_bytes(workspace: Path, path: str, data: bytes, overwrite: bool) -> tuple[str, str]:
    """Write `data` to `path` in the workspace, atomically. Blocking.

    Returns:
        `created` or `replaced`, and the path relative to the workspace.

    Raises:
        ExistingFile: The file exists and `overwrite` is off.
        ToolError: Outside the workspace, or a folder.
    """
    target = resolve_in_workspace(workspace, path)
    rel = relative_name(workspace, target)
    if target == workspace.resolve():
        raise ToolError(NOT_A_FILE.format(path=path))
    with open_parent(workspace, target, create=True) as folder:
        try:
            existing = os.stat(target.name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            raise ToolError(NOT_A_FILE.format(path=path))
        if existing is not None and not overwrite:
            raise ExistingFile(FILE_EXISTS.format(path=rel))
        mode = stat.S_IMODE(existing.st_mode) if existing is not None else 0o644
        _replace(folder, target.name, data, mode)
    return ("replaced" if existing is not None else "created"), rel


def _replace(folder: int, name: str, data: bytes, mode: int) -> None:
    """Write beside `name` and rename over it: a failed write never leaves a half file."""
    tmp = f".{name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, mode, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=folder)
        raise


def _list(workspace: Path, path: str) -> str:
    target = resolve_in_workspace(workspace, path)
    if not target.exists():
        raise ToolError(NOT_FOUND.format(path=path))
    if not target.is_dir():
        raise ToolError(NOT_A_DIR.format(path=path))
    entries = sorted(
        _entries(target, path), key=lambda e: (not stat.S_ISDIR(e[1].st_mode), e[0].name)
    )
    lines = [_listed(path, info) for path, info in entries[:MAX_LIST_ENTRIES]]
    if len(entries) > MAX_LIST_ENTRIES:
        lines.append(f"[... {len(entries) - MAX_LIST_ENTRIES} more entries not shown]")
    return "\n".join(lines) if lines else "(empty folder)"


def _entries(folder: Path, shown: str) -> list[tuple[Path, os.stat_result]]:
    # lstat: a link is listed as a link (a dangling one too), never followed.
    found = []
    try:
        paths = list(folder.iterdir())
    except OSError as exc:  # unreadable, or too deep to open
        raise ToolError(BAD_FOLDER.format(path=shown, why=os_reason(exc))) from None
    for path in paths:
        try:
            found.append((path, path.lstat()))
        except OSError:  # removed since the listing, or too deep to name
            continue
    return found


def _listed(path: Path, info: os.stat_result) -> str:
    mode, name = info.st_mode, shown_name(path.name)
    if stat.S_ISDIR(mode):
        return f"{name}/"
    if stat.S_ISREG(mode):
        return f"{name}  ({info.st_size} bytes)"
    if stat.S_ISLNK(mode):
        try:
            return f"{name} -> {shown_name(os.readlink(path))}  (link)"
        except OSError:
            return f"{name}  (link)"
    kinds = (
        (stat.S_ISFIFO, "fifo"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "device"),
        (stat.S_ISBLK, "device"),
    )
    kind = next((word for test, word in kinds if test(mode)), "special file")
    return f"{name}  ({kind}, not read)"


def _search(
    workspace: Path,
    query: str,
    glob: str,
    case_sensitive: bool,
    secret_names: tuple[str, ...] = (),
) -> str:
    if not query:
        raise ToolError("query is empty")
    if glob.startswith(("/", "~")) or ".." in Path(glob).parts:
        raise ToolError(BAD_GLOB.format(glob=glob))
    root = workspace.resolve()
    needle = query if case_sensitive else query.lower()
    matches: list[str] = []
    for file in _walk(root):
        rel = file.relative_to(root).as_posix()
        if not _glob_match(rel, glob) or is_secret_name(file, secret_names):
            continue  # secret files by name are left out, as the sandbox masks them
        matches.extend(_matches_in(file, shown_name(rel), needle, case_sensitive))
        if len(matches) >= MAX_SEARCH_MATCHES:
            matches = matches[:MAX_SEARCH_MATCHES]
            matches.append(f"[... stopped after {MAX_SEARCH_MATCHES} matches]")
            break
    return "\n".join(matches) if matches else f"no lines contain {query!r}"


def _walk(root: Path) -> Iterator[Path]:
    """The regular files below `root`, folder by folder in name order; links not followed.

    A stack, not recursion: a tree 1,100 folders deep is walked like any other, and a
    folder too deep to open, or unreadable, is passed over. A link may point out of the
    workspace, and a FIFO, socket or device would block or never end: only the regular
    files that lie inside are searched.
    """
    stack = [str(root)]
    while stack:
        try:
            with os.scandir(stack.pop()) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        folders = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIPPED_DIRS:
                        folders.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    yield Path(entry.path)
            except OSError:
                continue
        stack.extend(reversed(folders))


def _glob_match(rel: str, glob: str) -> bool:
    if glob in ("**/*", "**", "*"):
        return True
    if glob.startswith("**/"):
        return fnmatch.fnmatch(rel, glob) or fnmatch.fnmatch(rel, glob[3:])
    return fnmatch.fnmatch(rel, glob)


def _matches_in(file: Path, rel: str, needle: str, case_sensitive: bool) -> list[str]:
    try:
        fd = os.open(file, _READ_FLAGS)
    except OSError:  # gone, or swapped for a link since the walk
        return []
    with os.fdopen(fd, encoding="utf-8") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SEARCH_FILE_BYTES:
            return []
        try:
            text = fh.read()
        except (UnicodeDecodeError, OSError):
            return []
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        hay = line if case_sensitive else line.lower()
        if needle in hay:
            found.append(f"{rel}:{number}: {line.strip()[:200]}")
    return found
