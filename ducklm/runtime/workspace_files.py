"""The person's own files in a conversation's workspace: upload (undoable) and download.

An upload goes through the file tools' path rules (`tools/files.py:write_bytes`: no
`..`, `~` or NUL, nothing that resolves outside the workspace, folders walked without
following links, an existing file kept unless `overwrite`) and is recorded by the undo
service like a tool call's change, with `kind: upload` and an id of its own, so
`ducklm undo` (the last act by default) or `--to upload-...` takes it back. A download
opens the file the same way (`tools/files.py:open_regular`) and reads it in chunks off
the event loop.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ducklm.tools.errors import ToolError
from ducklm.tools.files import open_regular, write_bytes
from ducklm.tools.workspace import relative_name, resolve_in_workspace
from ducklm.undo.service import WorkspaceUndo

CHUNK_BYTES = 256 * 1024
NOT_IN_GIT = "path {path!r} is inside .git: DuckLM does not write there (hooks would run code)"


class UploadRefused(ToolError):
    """The path cannot take an upload; the message says why, for people."""


@dataclass(frozen=True)
class Uploaded:
    """What an upload did."""

    path: str
    """Relative to the workspace."""
    action: str
    """`created` or `replaced`."""
    size: int
    upload_id: str
    """The id `ducklm undo --to` takes."""
    undo_id: str | None
    """The change record; `None` when undo is off or nothing could be recorded."""


async def upload_file(
    undo: WorkspaceUndo | None,
    thread_id: str,
    workspace: Path,
    path: str,
    data: bytes,
    *,
    overwrite: bool = False,
) -> Uploaded:
    """Write `data` to `path` in `workspace` as the person's act, recorded for undo.

    Raises:
        ExistingFile: The file exists and `overwrite` is off.
        UploadRefused: `path` is inside `.git`.
        ToolError: Any other path rule of the file tools.
        UndoError: The workspace could not be recorded before the write (nothing written).
    """
    if ".git" in PurePosixPath(path).parts:
        raise UploadRefused(NOT_IN_GIT.format(path=path))
    upload_id = f"upload-{uuid.uuid4().hex[:12]}"
    # Checked before the snapshot: a refused path costs no checkpoint.
    await asyncio.to_thread(lambda: relative_name(workspace, resolve_in_workspace(workspace, path)))
    before = None if undo is None else await undo.snapshot(workspace)
    action, rel = await asyncio.to_thread(write_bytes, workspace, path, data, overwrite)
    if undo is None or before is None:
        return Uploaded(rel, action, len(data), upload_id, None)
    meta = {
        "kind": "upload",
        "thread_id": thread_id,
        # Its own id as its run: `ducklm undo` takes one upload back, not every upload
        # since the last turn.
        "run_id": upload_id,
        "call_id": upload_id,
        "tool": "upload",
        "workspace": str(workspace),
    }
    after = await undo.snapshot(workspace, meta=meta, commit=False)
    change = await undo.record(thread_id, before, after)
    return Uploaded(rel, action, len(data), upload_id, change.id if change else None)


async def open_download(workspace: Path, path: str) -> tuple[str, int, AsyncIterator[bytes]]:
    """The file at `path` in `workspace`: its name, size and its bytes in chunks.

    Raises:
        ToolError: The path breaks the file tools' rules, or is no regular file.
    """

    def opened() -> tuple[Path, int]:
        target = resolve_in_workspace(workspace, path)
        return target, open_regular(workspace, target, shown=path)

    target, fd = await asyncio.to_thread(opened)
    size = (await asyncio.to_thread(os.fstat, fd)).st_size
    return target.name, size, _chunks(fd)


async def _chunks(fd: int) -> AsyncIterator[bytes]:
    try:
        while chunk := await asyncio.to_thread(os.read, fd, CHUNK_BYTES):
            yield chunk
    finally:
        os.close(fd)
