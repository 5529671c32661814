"""A conversation's workspace files for the person: upload (undoable) and download.

`POST /v1/conversations/{id}/files` (multipart: `file`, optional `path`, `overwrite`)
writes the file as the person's own act (`ducklm/runtime/workspace_files.py`);
`GET /v1/conversations/{id}/files?path=` serves one as an attachment. Both keep the file
tools' path rules; the body cap of this route is `DUCK_UPLOAD_MAX_BYTES` (plus the
multipart framing), set in `server/app.py`.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, File, Form, HTTPException, Query, UploadFile, status
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from ducklm.runtime.facade import DuckLM
from ducklm.server.deps import Duck, Hub
from ducklm.server.responses import errors
from ducklm.server.schemas import MAX_PATH_LENGTH, Id
from ducklm.tools.errors import ToolError
from ducklm.tools.files import ExistingFile
from ducklm.tools.workspace import PathError
from ducklm.undo import UndoError

router = APIRouter(prefix="/conversations", tags=["files"])

UPLOAD_PATH = re.compile(r"/v1/conversations/[^/]+/files")
"""The route whose body may exceed `DUCK_MAX_BODY_BYTES` (see `upload_cap`)."""
MULTIPART_SLACK = 64 * 1024
"""Room for the multipart framing and the small fields around the file."""
TOO_LARGE = "the file is {size} bytes; uploads are limited to {limit} bytes (DUCK_UPLOAD_MAX_BYTES)"
EXISTS = "{path!r} already exists in the workspace; send overwrite=true to replace it"
RUNNING = "the conversation is running a task: upload once it has stopped, or cancel it"
NO_NAME = "give a path, or a file with a name"


class UploadView(BaseModel):
    """What an upload did."""

    path: str
    """Relative to the workspace."""
    action: str
    """`created` or `replaced`."""
    size: int
    upload_id: str
    """Undo just this upload with `ducklm undo ID --to <upload_id>`."""
    undo_id: str | None
    """The change record; `null` when undo is off (`DUCK_UNDO_MAX_BYTES=0`)."""


def upload_cap(upload_max_bytes: int) -> tuple[re.Pattern[str], int]:
    """The body cap of the upload route, for `GuardMiddleware(large_bodies=...)`."""
    return UPLOAD_PATH, upload_max_bytes + MULTIPART_SLACK


@router.post(
    "/{conversation_id}/files",
    status_code=status.HTTP_201_CREATED,
    responses=errors(404, 409, 413, 422),
)
async def upload(
    conversation_id: Id,
    *,
    duck: Duck,
    hub: Hub,
    file: Annotated[UploadFile, File(description="The file's bytes")],
    path: Annotated[str | None, Form(max_length=MAX_PATH_LENGTH)] = None,
    overwrite: Annotated[bool, Form()] = False,
) -> UploadView:
    """Put a file into the conversation's workspace, recorded for `ducklm undo`.

    `path` (relative to the workspace; default: the file's name) follows the file tools'
    rules: `422` for a path outside the workspace (`..`, absolute, a symlink leading out)
    or inside `.git`, `409` for an existing file without `overwrite`, `413` over the limit.
    """
    limit = duck.settings.upload_max_bytes
    if file.size is not None and file.size > limit:
        raise HTTPException(413, TOO_LARGE.format(size=file.size, limit=limit))
    target = path or file.filename
    if not target:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, NO_NAME)
    if hub.live_in(conversation_id) is not None:
        raise HTTPException(status.HTTP_409_CONFLICT, RUNNING)
    data = await file.read()
    if len(data) > limit:
        raise HTTPException(413, TOO_LARGE.format(size=len(data), limit=limit))
    try:
        done = await duck.upload(conversation_id, target, data, overwrite=overwrite)
    except ExistingFile:
        raise HTTPException(status.HTTP_409_CONFLICT, EXISTS.format(path=target)) from None
    except UndoError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, f"nothing uploaded: {exc}") from None
    except LookupError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    except ToolError as exc:  # the file tools' words, which name the path and why
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None
    return UploadView(
        path=done.path, action=done.action, size=done.size,
        upload_id=done.upload_id, undo_id=done.undo_id,
    )  # fmt: skip


@router.get(
    "/{conversation_id}/files",
    response_class=StreamingResponse,
    responses={
        200: {"description": "The file (`Content-Disposition: attachment`)."},
        **errors(404, 422),
    },
)
async def download(
    conversation_id: Id,
    duck: Duck,
    path: Annotated[str, Query(min_length=1, max_length=MAX_PATH_LENGTH)],
) -> StreamingResponse:
    """A file of the conversation's workspace, by its path relative to the workspace."""
    name, size, chunks = await _open(duck, conversation_id, path)
    disposition = f"attachment; filename*=UTF-8''{quote(name)}"
    return StreamingResponse(
        chunks,
        media_type="application/octet-stream",
        headers={
            "Content-Disposition": disposition,
            "Content-Length": str(size),
            "Cache-Control": "no-store",
        },
    )


async def _open(
    duck: DuckLM, conversation_id: str, path: str
) -> tuple[str, int, AsyncIterator[bytes]]:
    try:
        return await duck.download(conversation_id, path)
    except LookupError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    except PathError as exc:  # outside the workspace, `..`, a link that leads out
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None
    except ToolError as exc:  # no such file, a folder, a FIFO
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
