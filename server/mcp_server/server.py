"""The MCP server DuckLM is to other agents: its tools, resources and completions.

Built on the SDK's low-level `Server`, which speaks both revisions: 2025-11-25 (the
`initialize` handshake, a session) and 2026-07-28 (stateless, `server/discover`, each
request with its own metadata). The tools' arguments are this door's own pydantic
models (`arguments.py`), parsed once here, and their schemas are what `tools/list`
shows. `logging/setLevel` is a 2025-11-25 method, deprecated at 2026-07-28 (a request
asks for its log level in its `_meta` there); it is kept for the older clients.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    EmptyResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    ResourceTemplateReference,
    SetLevelRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from pydantic import BaseModel, ValidationError

from ducklm.server.mcp_server import conversations, memory, reporting, turns
from ducklm.server.mcp_server.arguments import (
    ChatArgs,
    ChatStatusArgs,
    MemoryAddArgs,
    MemorySearchArgs,
    first_problem,
)
from ducklm.server.mcp_server.door import McpDoor, ToolFailed
from ducklm.server.mcp_server.reporting import CallReport
from ducklm.server.routes.status import VERSION

INSTRUCTIONS = (
    "DuckLM is a local agent with its own tools, workspace and long-term memory. `chat` "
    "runs one DuckLM turn; its approvals are asked of DuckLM's person, never of you, so a "
    "turn may come back waiting (follow it with `chat_status`) or refused. The "
    "conversations are resources under ducklm://conversations/."
)
UNKNOWN_TOOL = "Unknown tool: {name!r}; DuckLM's tools are {tools}"
Handler = Callable[[McpDoor, Any, CallReport], Awaitable[CallToolResult]]
Context = ServerRequestContext[Any, Any]


def _quiet(run: Callable[[McpDoor, Any], Awaitable[CallToolResult]]) -> Handler:
    """A handler that reports no progress, in the shape every handler has."""

    async def handle(door: McpDoor, args: Any, progress: CallReport) -> CallToolResult:
        return await run(door, args)

    return handle


TOOLS: dict[str, tuple[type[BaseModel], Handler, str, ToolAnnotations]] = {
    "chat": (
        ChatArgs,
        turns.chat,
        "Ask DuckLM, a local agent, to do something: one turn in a conversation (a new one "
        "unless thread_id is given), in an allowed workspace. Returns its answer. Actions "
        "that need approval are asked of DuckLM's person, not of you: the result may say "
        "the turn waits for them (follow it with chat_status) or that it was refused.",
        ToolAnnotations(title="Chat with DuckLM", read_only_hint=False, open_world_hint=True),
    ),
    "chat_status": (
        ChatStatusArgs,
        _quiet(turns.chat_status),
        "Where a DuckLM conversation's latest turn stands: running, waiting for the "
        "person, or ended with its answer. wait_s waits for the end that long at most.",
        ToolAnnotations(title="DuckLM turn status", read_only_hint=True),
    ),
    "memory_search": (
        MemorySearchArgs,
        _quiet(memory.memory_search),
        "Search DuckLM's long-term memory (facts and preferences it keeps) for a workspace "
        "and, optionally, a conversation.",
        ToolAnnotations(title="Search DuckLM's memory", read_only_hint=True),
    ),
    "memory_add": (
        MemoryAddArgs,
        _quiet(memory.memory_add),
        "Store one short statement in DuckLM's long-term memory, as it is.",
        ToolAnnotations(
            title="Add to DuckLM's memory", read_only_hint=False, idempotent_hint=False
        ),
    ),
}


def tool_list() -> list[Tool]:
    """The tools, as `tools/list` shows them."""
    return [
        Tool(
            name=name,
            title=annotations.title,
            description=description,
            input_schema=model.model_json_schema(),
            annotations=annotations,
        )
        for name, (model, _, description, annotations) in TOOLS.items()
    ]


def build_server(door: McpDoor) -> Server[Any]:
    """DuckLM's MCP server over `door` (`ducklm`, at the package's version)."""

    async def list_tools(ctx: Context, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=tool_list())

    async def call_tool(ctx: Context, params: CallToolRequestParams) -> CallToolResult:
        return await _call(ctx, door, params.name, params.arguments or {})

    async def set_level(ctx: Context, params: SetLevelRequestParams) -> EmptyResult:
        reporting.set_level(ctx.session, params.level)
        return EmptyResult()

    async def list_resources(
        ctx: Context, params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        return ListResourcesResult(resources=await conversations.list_conversations(door))

    async def list_templates(
        ctx: Context, params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        return ListResourceTemplatesResult(resource_templates=[conversations.TEMPLATE])

    async def read_resource(ctx: Context, params: ReadResourceRequestParams) -> ReadResourceResult:
        return await conversations.read_conversation(door, params.uri, ctx.protocol_version)

    async def complete(ctx: Context, params: CompleteRequestParams) -> CompleteResult:
        ref, argument = params.ref, params.argument
        if isinstance(ref, ResourceTemplateReference) and argument.name == "thread_id":
            found = await conversations.complete_thread_id(door, argument.value)
            return CompleteResult(completion=found)
        # DuckLM has no prompts and no other arguments.
        return CompleteResult(completion=Completion(values=[]))

    # `on_set_logging_level` warns that logging is deprecated at 2026-07-28; it is kept
    # on purpose for 2025-11-25 clients.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        return Server(
            "ducklm",
            version=VERSION,
            instructions=INSTRUCTIONS,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_set_logging_level=set_level,
            on_list_resources=list_resources,
            on_list_resource_templates=list_templates,
            on_read_resource=read_resource,
            on_completion=complete,
        )


async def _call(
    ctx: Context, door: McpDoor, name: str, arguments: dict[str, Any]
) -> CallToolResult:
    """Parse the arguments and run the tool; a refusal is a result with isError.

    An unknown tool is a JSON-RPC error (-32602), as the spec has it: the isError
    result is kept for a call that ran (or whose arguments were wrong).
    """
    if name not in TOOLS:
        text = UNKNOWN_TOOL.format(name=name, tools=", ".join(TOOLS))
        raise MCPError(code=INVALID_PARAMS, message=text)
    model, handler, _, _ = TOOLS[name]
    try:
        args = model.model_validate(arguments)
    except ValidationError as exc:
        return _failed(first_problem(exc))
    try:
        return await handler(door, args, CallReport(ctx))
    except ToolFailed as exc:
        return _failed(str(exc))


def _failed(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
