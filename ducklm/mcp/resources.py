"""A server's resources for the model: `<server>__list_resources` and `<server>__read_resource`.

A server that offers resources (the `resources` capability) gets two tools of DuckLM's
making beside its own. Both only read, and say so (`readOnlyHint`), so the policy treats
them as it treats the server's own reads: unasked from a trusted server, asked from an
untrusted one (`tools/trust.py:assess_mcp`), and what an untrusted server returns taints
the conversation as its tool results do. A read is rendered as an embedded resource of a
tool result is (`content.py`): text as text, a blob saved under the media folder.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.tools import BaseTool, StructuredTool

from ducklm.mcp.catalog import guarded, list_templates, page
from ducklm.mcp.content import render_result
from ducklm.tools.errors import ToolError
from ducklm.tools.mcp_info import METADATA_KEY, McpToolInfo, model_name

if TYPE_CHECKING:
    from mcp import ClientSession

    from ducklm.mcp.running import RunningServer

T = TypeVar("T")
LIST = "list_resources"
READ = "read_resource"
READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
LIST_WORDS = (
    "List the resources (files, documents, records) the MCP server {name} offers, and its"
    " URI templates."
)
READ_WORDS = (
    "Read one resource of the MCP server {name} by its URI (from {list_name}; for a"
    " template, its {{...}} parts filled in)."
)
TEMPLATE_LINE = "- template {uri} {name}{about}{words} (fill in the {{...}} parts to read it)"
NO_RESOURCES = "the MCP server {name} lists no resources"
READ_SCHEMA = {
    "type": "object",
    "properties": {"uri": {"type": "string", "description": "The resource's URI"}},
    "required": ["uri"],
}


def resource_tools(server: RunningServer, session: ClientSession) -> list[BaseTool]:
    """The two resource tools of `server`, or none when it offers no resources."""
    capabilities = session.server_capabilities
    if capabilities is None or capabilities.resources is None:
        return []
    name = server.spec.name
    list_name = model_name(name, LIST)

    async def list_them() -> str:
        return await _guarded(server, "list its resources", _list(server))

    async def read_one(uri: str) -> tuple[str, dict[str, Any]]:
        return await _guarded(server, f"read {uri}", _read(server, uri))

    return [
        _tool(
            server,
            LIST,
            LIST_WORDS.format(name=name),
            {"type": "object", "properties": {}},
            list_them,
        ),
        _tool(
            server, READ, READ_WORDS.format(name=name, list_name=list_name), READ_SCHEMA, read_one
        ),
    ]


def _tool(
    server: RunningServer, tool: str, words: str, schema: dict[str, Any], run: Any
) -> BaseTool:
    spec = server.spec
    info = McpToolInfo(
        server=spec.name,
        tool=tool,
        name=model_name(spec.name, tool),
        description=words,
        trusted=spec.trusted,
        annotations=dict(READ_ONLY),
    )
    return StructuredTool(
        name=info.name,
        description=words,
        args_schema=schema,
        coroutine=run,
        response_format="content_and_artifact" if tool == READ else "content",
        metadata={METADATA_KEY: info},
    )


async def _guarded(server: RunningServer, what: str, work: Awaitable[T]) -> T:
    """`work` within the server's total deadline; its failures as tool errors."""
    return await guarded(server, what, work, ToolError)


async def _list(server: RunningServer) -> str:
    session = _session(server)
    lines, cursor = [], None
    while True:
        got = await session.list_resources(params=page(cursor))
        for item in got.resources:
            about, words = _about(item.mime_type, item.description)
            lines.append(f"- {item.uri} {item.name}{about}{words}")
        cursor = got.next_cursor
        if not cursor:
            break
    for template in await list_templates(session):
        about, words = _about(template.mime_type, template.description)
        lines.append(
            TEMPLATE_LINE.format(
                uri=template.uri_template, name=template.name, about=about, words=words
            )
        )
    return "\n".join(lines) or NO_RESOURCES.format(name=server.spec.name)


def _about(mime_type: str | None, description: str | None) -> tuple[str, str]:
    return (f" ({mime_type})" if mime_type else "", f": {description}" if description else "")


async def _read(server: RunningServer, uri: str) -> tuple[str, dict[str, Any]]:
    from mcp import types  # noqa: PLC0415  loaded with the session

    result = await _session(server).read_resource(uri)
    blocks = [types.EmbeddedResource(type="resource", resource=c) for c in result.contents]
    as_result = types.CallToolResult(content=list(blocks))
    rendered = await asyncio.to_thread(render_result, as_result, server.media_dir)
    return rendered.text, rendered.artifact()


def _session(server: RunningServer) -> ClientSession:
    session = server.session
    if session is None:
        raise ToolError(server.error or f"the MCP server {server.spec.name} is not running")
    return session
