"""DuckLM's conversations as MCP resources: `ducklm://conversations/{thread_id}`.

Listing gives one resource per conversation (title, newest first); reading gives the
conversation as `GET /v1/conversations/{id}` shows it: title, workspace, messages, and
the task still open in it. An unknown conversation is the error each revision names:
-32002 (resource not found) at 2025-11-25, -32602 (invalid params) at 2026-07-28.
"""

from __future__ import annotations

from fastapi import HTTPException
from mcp import MCPError
from mcp.types import (
    INVALID_PARAMS,
    Completion,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextResourceContents,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from ducklm.server.mcp_server.door import McpDoor
from ducklm.server.routes.conversations import get_conversation

PREFIX = "ducklm://conversations/"
TEMPLATE = ResourceTemplate(
    uri_template=PREFIX + "{thread_id}",
    name="conversation",
    title="A DuckLM conversation",
    description="A conversation's title, workspace and messages, and its open task.",
    mime_type="application/json",
)
RESOURCE_NOT_FOUND = -32002  # 2025-11-25's code for an unknown resource
MAX_COMPLETIONS = 100  # what completion/complete may return at most


async def list_conversations(door: McpDoor) -> list[Resource]:
    """The conversations, most recently updated first (the 200 latest, as the sidebar)."""
    return [
        Resource(
            uri=PREFIX + c.id,
            name=c.id,
            title=c.title or "New conversation",
            description=f"DuckLM conversation {c.title!r}"
            + (f" in {c.workspace}" * bool(c.workspace)),
            mime_type="application/json",
        )
        for c in await door.duck.conversations.list()
    ]


async def read_conversation(door: McpDoor, uri: str, revision: str) -> ReadResourceResult:
    """The conversation `uri` names, as JSON.

    Raises:
        MCPError: The URI names no conversation (the code `revision` gives it).
    """
    thread_id = uri.removeprefix(PREFIX) if uri.startswith(PREFIX) else ""
    if not thread_id or "/" in thread_id:
        raise _not_found(uri, revision)
    try:
        detail = await get_conversation(thread_id, door.duck)
    except HTTPException:  # the route's 404: no such conversation
        raise _not_found(uri, revision) from None
    text = TextResourceContents(
        uri=uri, text=detail.model_dump_json(), mime_type="application/json"
    )
    return ReadResourceResult(contents=[text])


async def complete_thread_id(door: McpDoor, partial: str) -> Completion:
    """Conversation ids that start with `partial`, for the template's argument."""
    ids = [c.id for c in await door.duck.conversations.list() if c.id.startswith(partial)]
    return Completion(
        values=ids[:MAX_COMPLETIONS], total=len(ids), has_more=len(ids) > MAX_COMPLETIONS
    )


def _not_found(uri: str, revision: str) -> MCPError:
    code = INVALID_PARAMS if revision in MODERN_PROTOCOL_VERSIONS else RESOURCE_NOT_FOUND
    return MCPError(code=code, message=f"no such resource: {uri}", data={"uri": uri})
