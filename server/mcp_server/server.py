"""The MCP server DuckLM is to other agents: its tools, resources and completions.

Built on the SDK's low-level `Server`: the tools' arguments are this door's own pydantic
models (`arguments.py`), parsed once here, and their schemas are what `tools/list` shows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.lowlevel import Server
from mcp.shared.exceptions import McpError
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequest,
    CallToolResult,
    Completion,
    CompletionArgument,
    CompletionContext,
    ErrorData,
    LoggingLevel,
    PromptReference,
    Resource,
    ResourceTemplate,
    ResourceTemplateReference,
    TextContent,
    Tool,
    ToolAnnotations,
)
from mcp.types import ServerResult as Answer
from pydantic import AnyUrl, BaseModel, ValidationError

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
        ToolAnnotations(title="Chat with DuckLM", readOnlyHint=False, openWorldHint=True),
    ),
    "chat_status": (
        ChatStatusArgs,
        _quiet(turns.chat_status),
        "Where a DuckLM conversation's latest turn stands: running, waiting for the "
        "person, or ended with its answer. wait_s waits for the end that long at most.",
        ToolAnnotations(title="DuckLM turn status", readOnlyHint=True),
    ),
    "memory_search": (
        MemorySearchArgs,
        _quiet(memory.memory_search),
        "Search DuckLM's long-term memory (facts and preferences it keeps) for a workspace "
        "and, optionally, a conversation.",
        ToolAnnotations(title="Search DuckLM's memory", readOnlyHint=True),
    ),
    "memory_add": (
        MemoryAddArgs,
        _quiet(memory.memory_add),
        "Store one short statement in DuckLM's long-term memory, as it is.",
        ToolAnnotations(title="Add to DuckLM's memory", readOnlyHint=False, idempotentHint=False),
    ),
}


def tool_list() -> list[Tool]:
    """The tools, as `tools/list` shows them."""
    return [
        Tool(
            name=name,
            title=annotations.title,
            description=description,
            inputSchema=model.model_json_schema(),
            annotations=annotations,
        )
        for name, (model, _, description, annotations) in TOOLS.items()
    ]


def build_server(door: McpDoor) -> Server[Any, Any]:
    """DuckLM's MCP server over `door` (`ducklm`, at the package's version)."""
    server: Server[Any, Any] = Server("ducklm", version=VERSION, instructions=INSTRUCTIONS)

    @server.list_tools()  # type: ignore[untyped-decorator, no-untyped-call]
    async def list_tools() -> list[Tool]:
        return tool_list()

    # Parsed in `_call`, by the arguments' own models. (The SDK's decorators are untyped.)
    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any]) -> CallToolResult:
        return await _call(server, door, name, arguments)

    _refuse_unknown_tools(server)

    @server.set_logging_level()  # type: ignore[untyped-decorator, no-untyped-call]
    async def set_level(level: LoggingLevel) -> None:
        reporting.set_level(server.request_context.session, level)

    @server.list_resources()  # type: ignore[untyped-decorator, no-untyped-call]
    async def list_resources() -> list[Resource]:
        return await conversations.list_conversations(door)

    @server.list_resource_templates()  # type: ignore[untyped-decorator, no-untyped-call]
    async def list_resource_templates() -> list[ResourceTemplate]:
        return [conversations.TEMPLATE]

    @server.read_resource()  # type: ignore[untyped-decorator, no-untyped-call]
    async def read_resource(uri: AnyUrl) -> Any:
        return await conversations.read_conversation(door, str(uri))

    @server.completion()  # type: ignore[untyped-decorator, no-untyped-call]
    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion:
        if isinstance(ref, ResourceTemplateReference) and argument.name == "thread_id":
            return await conversations.complete_thread_id(door, argument.value)
        return Completion(values=[])  # DuckLM has no prompts and no other arguments

    return server


def _refuse_unknown_tools(server: Server[Any, Any]) -> None:
    """An unknown tool is a JSON-RPC error (-32602), as the spec has it.

    The SDK's `call_tool` turns whatever its handler raises into an isError result, which
    the spec keeps for a call that ran (or whose arguments were wrong): so the name is
    checked before the SDK's handler.
    """
    sdk_handler = server.request_handlers[CallToolRequest]

    async def handle(request: CallToolRequest) -> Answer:
        name = request.params.name
        if name not in TOOLS:
            text = UNKNOWN_TOOL.format(name=name, tools=", ".join(TOOLS))
            raise McpError(ErrorData(code=INVALID_PARAMS, message=text))
        return await sdk_handler(request)

    server.request_handlers[CallToolRequest] = handle


async def _call(
    server: Server[Any, Any], door: McpDoor, name: str, arguments: dict[str, Any]
) -> CallToolResult:
    """Parse the arguments and run the tool; a refusal is a result with isError.

    (An unknown name never gets here: `_refuse_unknown_tools`.)
    """
    model, handler, _, _ = TOOLS[name]
    try:
        args = model.model_validate(arguments)
    except ValidationError as exc:
        return _failed(first_problem(exc))
    try:
        return await handler(door, args, CallReport(server.request_context))
    except ToolFailed as exc:
        return _failed(str(exc))


def _failed(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], isError=True)
