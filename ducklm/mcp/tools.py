"""MCP tools as the model sees them: `<server>__<tool>`, with the server's own schema.

langchain-mcp-adapters turns each MCP tool into a LangChain tool bound to the open
session (and converts its results); DuckLM wraps it under its own name with a timeout,
clear words for a crash, a cap on huge results, and the facts the policy reads
(`McpToolInfo` in the tool's metadata).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool

from ducklm.mcp.errors import failure_words
from ducklm.tools.errors import ToolError
from ducklm.tools.mcp_info import METADATA_KEY, McpToolInfo, model_name

if TYPE_CHECKING:
    from ducklm.mcp.server import McpServer

# The audit log keeps a tool's whole output; a server answering megabytes would fill it.
# The state keeps far less (`DUCK_MAX_TOOL_OUTPUT_CHARS`, cut by the tool step).
MAX_RESULT_CHARS = 200_000
RESULT_CUT = "\n[... {n} chars of the MCP result cut ...]\n"
TIMED_OUT = "the MCP tool {name} did not answer within {s:g} s; it may still be working"
NOT_RUNNING = "{why}; its tools come back when the next turn starts it again"
DIED_IN_CALL = "the call was lost: {why}"
TOOL_FAILED = "the MCP tool {name} reported an error: {text}"


def adapt_tool(server: McpServer, tool: BaseTool) -> BaseTool:
    """`tool` (from langchain-mcp-adapters) under DuckLM's name, rules and metadata."""
    spec = server.spec
    hints = {k: v for k, v in (tool.metadata or {}).items() if k.endswith("Hint") or k == "title"}
    info = McpToolInfo(
        server=spec.name,
        tool=tool.name,
        name=model_name(spec.name, tool.name),
        description=" ".join((tool.description or "").split()),
        trusted=spec.trusted,
        annotations={k: v for k, v in hints.items() if v is not None},
    )

    async def call(**arguments: Any) -> str:
        return await _call(server, tool, info, arguments)

    return StructuredTool(
        name=info.name,
        description=tool.description or f"{tool.name} (MCP server {spec.name})",
        args_schema=tool.args_schema or {"type": "object", "properties": {}},
        coroutine=call,
        metadata={METADATA_KEY: info},
    )


async def _call(server: McpServer, tool: BaseTool, info: McpToolInfo, args: dict[str, Any]) -> str:
    if server.session is None:
        raise ToolError(NOT_RUNNING.format(why=server.error or f"{info.server} is not running"))
    as_call = {"type": "tool_call", "name": tool.name, "id": "mcp", "args": args}
    try:
        async with asyncio.timeout(server.timeout_s):
            message = await tool.ainvoke(as_call)
    except TimeoutError:
        raise ToolError(TIMED_OUT.format(name=info.name, s=server.timeout_s)) from None
    except ToolError:
        raise
    except Exception as exc:  # the session broke under the call: the server died
        why = await server.mark_crashed(failure_words(exc))
        raise ToolError(DIED_IN_CALL.format(why=why)) from None
    text = message.text if isinstance(message, ToolMessage) else str(message)
    if isinstance(message, ToolMessage) and message.status == "error":
        raise ToolError(TOOL_FAILED.format(name=info.name, text=_cap(text)))
    return _cap(text)


def _cap(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    half = MAX_RESULT_CHARS // 2
    return text[:half] + RESULT_CUT.format(n=len(text) - MAX_RESULT_CHARS) + text[-half:]
