"""MCP tools as the model sees them: `<server>__<tool>`, with the server's own schema.

Each tool the server lists becomes a LangChain tool under DuckLM's name that calls
`tools/call` on the open session: with a progress token (a notification pushes the
idle deadline back, never past the total one; `tools/mcp_info.py:progress_listener`
hears it), `notifications/cancelled` when DuckLM gives up (`session.py`), the result
rendered by `content.py` (its blocks in the artifact, which `tool_call_finished`
carries as `mcp_content`), the server's questions to the call's `CallAsks` (`asks.py`;
a question no answer in hand fits stops the call with `NeedsPerson`; at 2026-07-28 the
questions come as `input_required` rounds, `rounds.py`; a -32042 error's
links are asked as URL-mode questions, and the call made once more), a JSON-RPC error
as a tool error (the server stays up), a
broken session as a crash, a cap on huge results, and the facts the policy reads
(`McpToolInfo` in the tool's metadata).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool, StructuredTool

from ducklm.mcp.asks import CallAsks, NeedsPerson, QuestionPending, Refused, call_asks
from ducklm.mcp.content import render_result
from ducklm.mcp.errors import failure_words
from ducklm.mcp.held import Held, Progress
from ducklm.tools.errors import ToolError
from ducklm.tools.mcp_info import METADATA_KEY, McpToolInfo, model_name, progress_listener

if TYPE_CHECKING:
    from mcp import types

    from ducklm.mcp.running import RunningServer
    from ducklm.mcp.session import DuckSession

# The audit log keeps a tool's whole output; a server answering megabytes would fill it.
# The state keeps far less (`DUCK_MAX_TOOL_OUTPUT_CHARS`, cut by the tool step).
MAX_RESULT_CHARS = 200_000
RESULT_CUT = "\n[... {n} chars of the MCP result cut ...]\n"
TIMED_OUT = "the MCP tool {name} did not answer within {s:g} s; it was told to stop"
IDLE = "the MCP tool {name} sent nothing for {s:g} s; it was told to stop"
NOT_RUNNING = "{why}; its tools come back when the next turn starts it again"
DIED_IN_CALL = "the call was lost: {why}"
TOOL_FAILED = "the MCP tool {name} reported an error: {text}"
PROTOCOL_ERROR = "the MCP server refused the call to {name}: {message} (JSON-RPC error {code})"
LINK_NOT_OPENED = "the MCP server needs the person to open a link first, and they chose {action}"


def adapt_tool(server: RunningServer, tool: types.Tool) -> BaseTool:
    """The MCP `tool` of `server` under DuckLM's name, rules and metadata."""
    spec = server.spec
    hints = (
        tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
    )
    info = McpToolInfo(
        server=spec.name,
        tool=tool.name,
        name=model_name(spec.name, tool.name),
        description=" ".join((tool.description or "").split()),
        trusted=spec.trusted,
        annotations={k: v for k, v in hints.items() if k.endswith("Hint") or k == "title"},
    )

    async def call(**arguments: Any) -> tuple[str, dict[str, Any]]:
        return await _call(server, info, arguments)

    return StructuredTool(
        name=info.name,
        description=tool.description or f"{tool.name} (MCP server {spec.name})",
        args_schema=model_schema(tool.input_schema),
        coroutine=call,
        response_format="content_and_artifact",
        metadata={METADATA_KEY: info},
    )


def model_schema(schema: dict[str, Any] | None) -> dict[str, Any]:
    """A tool's input schema as the model is offered it: as the server wrote it.

    JSON Schema 2020-12 is the spec's dialect, and its keywords stay (`$schema`, `$defs`,
    `$ref`, `additionalProperties`, the compositions): a model given less is told less
    than the server said (SEP-1613). A `$ref` is never fetched. A tool without one takes
    an object of no properties.
    """
    return dict(schema) if schema else {"type": "object", "properties": {}}


async def _call(server: RunningServer, info: McpToolInfo, args: dict[str, Any]) -> tuple[str, Any]:
    from mcp import MCPError  # noqa: PLC0415  loaded with the session
    from mcp.types import CONNECTION_CLOSED  # noqa: PLC0415

    session = server.session
    if session is None:
        raise ToolError(NOT_RUNNING.format(why=server.error or f"{info.server} is not running"))
    try:
        result = await _within_deadlines(session, server, info, args)
    except MCPError as exc:
        if exc.error.code == CONNECTION_CLOSED:  # the SDK's word for a server that died
            why = await server.mark_crashed(failure_words(exc))
            raise ToolError(DIED_IN_CALL.format(why=why)) from None
        error = exc.error  # the server answered, with an error: it is still there
        words = PROTOCOL_ERROR.format(name=info.name, message=error.message, code=error.code)
        raise ToolError(words) from None
    except (ToolError, NeedsPerson):
        raise
    except Exception as exc:  # the session broke under the call: the server died
        why = await server.mark_crashed(failure_words(exc))
        raise ToolError(DIED_IN_CALL.format(why=why)) from None
    rendered = await asyncio.to_thread(render_result, result, server.media_dir)
    if rendered.is_error:
        raise ToolError(TOOL_FAILED.format(name=info.name, text=_cap(rendered.text)))
    return _cap(rendered.text), rendered.artifact()


async def _within_deadlines(
    session: DuckSession, server: RunningServer, info: McpToolInfo, args: dict[str, Any]
) -> types.CallToolResult:
    """`tools/call`, given up (and cancelled) past the idle or the total deadline.

    A call its server held open for the person's answer (`held.py`) is taken up again,
    the answer handed to it, with deadlines counted afresh.
    """
    from ducklm.mcp.rounds import call_in_rounds  # noqa: PLC0415  loaded with the session

    whole, idle = server.timeout_s, server.idle_timeout_s
    loop = asyncio.get_running_loop()
    deadline = loop.time() + whole
    # Read here: the SDK calls back from its own task.
    progress = Progress(idle, deadline, None, progress_listener.get())
    asks = call_asks.get()
    try:
        async with asyncio.timeout(min(idle, whole)) as limit:
            progress.limit = limit
            held = server.held.take(asks) if asks is not None else None
            if held is not None and asks is not None:
                held.asks.take_callbacks(asks)
                held.progress.idle_s, held.progress.deadline = idle, deadline
                held.progress.limit, held.progress.listener = limit, progress.listener
                return await _until_asked(server, held.asks, held.running, held.progress)

            def call() -> Awaitable[types.CallToolResult]:
                return call_in_rounds(session, info.tool, args, asks=asks, progress=progress)

            if asks is None:
                return await call()
            return await _opening_links(server, asks, call, progress)
    except TimeoutError:
        if loop.time() >= deadline - 0.01:
            raise ToolError(TIMED_OUT.format(name=info.name, s=whole)) from None
        raise ToolError(IDLE.format(name=info.name, s=idle)) from None


async def _opening_links(
    server: RunningServer,
    asks: CallAsks,
    call: Callable[[], Awaitable[types.CallToolResult]],
    progress: Progress,
) -> types.CallToolResult:
    """`_answering`, made once more after the person opened the links a -32042 error names.

    URL-mode elicitation's error path (`URLElicitationRequiredError`): the server cannot
    go on until the person did what each link asks. Each is asked as an
    `elicitation/create` of mode url is; when the person accepted them all, the call is
    made again, once (a second -32042 is a tool error, as any JSON-RPC error).

    Raises:
        NeedsPerson: A link no answer in hand fits: the person is to be asked.
        ToolError: The person declined or cancelled one, or it is not an http(s) link.
    """
    from mcp import MCPError  # noqa: PLC0415  loaded with the session
    from mcp.types import URL_ELICITATION_REQUIRED, ElicitationRequiredErrorData  # noqa: PLC0415

    try:
        return await _answering(server, asks, call(), progress)
    except MCPError as exc:
        if exc.error.code != URL_ELICITATION_REQUIRED:
            raise
        try:
            links = ElicitationRequiredErrorData.model_validate(exc.error.data).elicitations
        except ValueError:
            raise exc from None  # not the shape the spec gives it: a plain JSON-RPC error
    for link in links:
        try:
            answer = await asks.elicit_url(link.message, link.url)
        except QuestionPending:
            assert asks.pending is not None  # set with the raise
            raise NeedsPerson(asks.pending) from None
        except Refused as refused:
            raise ToolError(str(refused)) from None
        if answer["action"] != "accept":
            raise ToolError(LINK_NOT_OPENED.format(action=answer["action"]))
    asks.released.clear()  # a question in the new call waits for its own cancel
    return await _answering(server, asks, call(), progress)


async def _answering(
    server: RunningServer, asks: CallAsks, call: Awaitable[types.CallToolResult], progress: Progress
) -> types.CallToolResult:
    """`call`, with the server's questions going to `asks` (`_until_asked`)."""
    running = asyncio.ensure_future(call)
    server.asking.append(asks)
    return await _until_asked(server, asks, running, progress)


async def _until_asked(
    server: RunningServer,
    asks: CallAsks,
    running: asyncio.Future[types.CallToolResult],
    progress: Progress,
) -> types.CallToolResult:
    """The result of `running` (whose questions go to `asks`, in `server.asking`).

    Raises:
        NeedsPerson: The server asked something no answer in hand fits. Asked inside
            the call (2025-11-25), the call waits open for the answer, held by the
            server (`held.py`); else it was cancelled (the server told). Either way the
            person is to be asked.
    """
    stopping: asyncio.Future[Any] = asyncio.ensure_future(asks.stopped.wait())
    kept = False
    try:
        await asyncio.wait((running, stopping), return_when=asyncio.FIRST_COMPLETED)
        if not running.done() and asks.held and asks.pending is not None:
            server.held.keep(Held(running, asks, progress), asks.hold_s)
            kept = True
            raise NeedsPerson(asks.pending)
    finally:
        stopping.cancel()
        if not kept:
            server.asking.remove(asks)
            if not running.done():  # stopped for a question, or the caller gave up
                running.cancel()
                with contextlib.suppress(BaseException):
                    await running  # `DuckSession` sends `notifications/cancelled`
            asks.released.set()
    if asks.pending is not None:  # even if an answer raced the stop: it is not used
        raise NeedsPerson(asks.pending)
    return running.result()


def _cap(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    half = MAX_RESULT_CHARS // 2
    return text[:half] + RESULT_CUT.format(n=len(text) - MAX_RESULT_CHARS) + text[-half:]
