"""A conversation as a file and back: `GET .../export?format=md|jsonl`, `POST .../import`."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Response, status
from pydantic import BaseModel, Field

from ducklm.kit.workspaces import requested_workspace
from ducklm.runtime.exports import BadImport, import_conversation, read_jsonl
from ducklm.runtime.exports.jsonl import jsonl_export
from ducklm.runtime.exports.markdown import markdown_export
from ducklm.server.deps import Duck
from ducklm.server.responses import errors
from ducklm.server.routes.conversations import find_conversation
from ducklm.server.schemas import Id
from ducklm.stores import Conversation

router = APIRouter(prefix="/conversations", tags=["conversations"])

ExportFormat = Literal["md", "jsonl"]
ExportVersions = Literal["shown", "all"]
MEDIA_TYPES = {"md": "text/markdown; charset=utf-8", "jsonl": "application/jsonl; charset=utf-8"}
EXPORTED: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The conversation as a file (`Content-Disposition: attachment`).",
        "content": {"text/markdown": {}, "application/jsonl": {}},
    }
}


class ImportRequest(BaseModel):
    """A JSONL export to read back as a new conversation."""

    jsonl: str = Field(min_length=1)
    """The file's text, as `GET /v1/conversations/{id}/export?format=jsonl` wrote it."""
    workspace: str | None = None
    """An allowed workspace for it (the exported one is not taken from the file)."""


@router.get(
    "/{conversation_id}/export",
    response_class=Response,
    responses={**EXPORTED, **errors(404)},
)
async def export_conversation(
    conversation_id: Id,
    duck: Duck,
    format: Annotated[ExportFormat, Query()] = "md",
    versions: Annotated[ExportVersions, Query()] = "shown",
) -> Response:
    """The conversation as Markdown (for people) or JSONL (messages, calls, events).

    `versions=all` adds every other version of it (regenerated or edited messages)
    after the one shown; an import of such a JSONL takes the one shown as history.
    """
    conversation = await find_conversation(duck, conversation_id)
    every = await duck.version_transcripts(conversation_id) if versions == "all" else []
    exchanges = every[0] if every else await duck.transcript(conversation_id)
    write = markdown_export if format == "md" else jsonl_export
    # A long conversation takes a while to write (1,000 exchanges with a tool call each:
    # 0.16 s as Markdown, 0.68 s as JSONL, at load 11 on 2 cores): off the event loop.
    text = await asyncio.to_thread(write, conversation, exchanges, time.time(), every[1:])
    name = re.sub(r"[^A-Za-z0-9._-]", "_", conversation_id)[:80]
    suffix = "-all-versions" if versions == "all" else ""
    disposition = f'attachment; filename="ducklm-{name}{suffix}.{format}"'
    return Response(
        text,
        media_type=MEDIA_TYPES[format],
        headers={"Content-Disposition": disposition, "Cache-Control": "no-store"},
    )


@router.post("/import", status_code=status.HTTP_201_CREATED, responses=errors(422))
async def import_jsonl(body: ImportRequest, duck: Duck) -> Conversation:
    """A new conversation from a JSONL export: its messages as history, nothing run again.

    A bad file is a `422` naming the line; nothing of it is kept.
    """
    try:
        found = await asyncio.to_thread(read_jsonl, body.jsonl)  # CPU: off the loop
    except BadImport as exc:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT, f"cannot import: {exc}"
        ) from None
    workspace = await requested_workspace(duck.settings, body.workspace)
    return await import_conversation(duck, found, workspace=workspace)
