"""DuckLM's conversations as MCP resources: `ducklm://conversations/{thread_id}`.

Listing gives one resource per conversation (title, newest first); reading gives the
conversation as `GET /v1/conversations/{id}` shows it: title, workspace, messages, and
the task still open in it.
"""

from __future__ import annotations

from fastapi import HTTPException
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.shared.exceptions import McpError
from mcp.types import Completion, ErrorData, Resource, ResourceTemplate

from ducklm.server.mcp_server.door import McpDoor
from ducklm.server.routes.conversations import get_conversation

PREFIX = "ducklm://conversations/"
TEMPLATE = ResourceTemplate(
    uriTemplate=PREFIX + "{thread_id}",
    name="conversation",
    title="A DuckLM conversation",
    description="A conversation's title, workspace and messages, and its open task.",
    mimeType="application/json",
)
RESOURCE_NOT_FOUND = -32002  # the spec's code for an unknown resource
MAX_COMPLETIONS = 100  # what completion/complete may return at most


async def list_conversations(door: McpDoor) -> list[Resource]:
    """The conversations, most recently updated first (the 200 latest, as the sidebar)."""
    return [
        Resource(
            uri=PREFIX + c.id,  # type: ignore[arg-type]  # pydantic reads the string as a URL
            name=c.id,
            title=c.title or "New conversation",
            description=f"DuckLM conversation {c.title!r}"
            + (f" in {c.workspace}" * bool(c.workspace)),
            mimeType="application/json",
        )
        for c in await door.duck.conversations.list()
    ]


async def read_conversation(door: McpDoor, uri: str) -> list[ReadResourceContents]:
    """The conversation `uri` names, as JSON.

    Raises:
        McpError: The URI names no conversation (-32002, as the spec asks).
    """
    thread_id = uri.removeprefix(PREFIX) if uri.startswith(PREFIX) else ""
    if not thread_id or "/" in thread_id:
        raise _not_found(uri)
    try:
        detail = await get_conversation(thread_id, door.duck)
    except HTTPException:  # the route's 404: no such conversation
        raise _not_found(uri) from None
    return [ReadResourceContents(content=detail.model_dump_json(), mime_type="application/json")]


async def complete_thread_id(door: McpDoor, partial: str) -> Completion:
    """Conversation ids that start with `partial`, for the template's argument."""
    ids = [c.id for c in await door.duck.conversations.list() if c.id.startswith(partial)]
    return Completion(
        values=ids[:MAX_COMPLETIONS], total=len(ids), hasMore=len(ids) > MAX_COMPLETIONS
    )


def _not_found(uri: str) -> McpError:
    return McpError(ErrorData(code=RESOURCE_NOT_FOUND, message=f"no such resource: {uri}"))
