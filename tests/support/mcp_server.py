"""A small MCP server for the tests (the `mcp` SDK's MCPServer), over stdio or streamable HTTP.

    python tests/support/mcp_server.py            # stdio
    python tests/support/mcp_server.py --http     # HTTP on a free loopback port, printed first

Its tools cover what DuckLM must handle: annotations (read-only, open-world,
destructive), a result carrying an injection (`MCP_TEST_INJECTION`), a tool that sends
text out (recorded in `MCP_TEST_SENT`, so a test can see whether it ran), a crash mid-call,
a call that never answers, a huge result, and what the process sees of its environment;
who the client says it is and its roots, a JSON-RPC error, a call that records its
cancellation, and one that reports progress; one that asks the person (elicitation;
`reserve_table` notes its start first and asks inside the call, at 2025-11-25) and
one that asks the client's model (sampling), and one that asks the person to open a link
(URL-mode elicitation, `open_link`, and its error path, `pay_first`); a resource (`notes://shop`).

It speaks both revisions, as the SDK's MCPServer does: the client's first request picks
2026-07-28 (`server/discover`) or 2025-11-25 (`initialize`); `--revision 2025-11-25`
refuses `server/discover`, as an older server does. Its questions (the roots, a form, the
client's model) are the SDK's resolvers (`Resolve`): at 2026-07-28 an `input_required`
result and the call made again with the answers, at 2025-11-25 requests during the call.
`open_link` asks in URL mode by hand, in each revision's way.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import uuid
from pathlib import Path
from typing import Annotated, Any

from mcp import MCPError
from mcp.server.mcpserver import (
    Context,
    ElicitationResult,
    ListRoots,
    MCPServer,
    Resolve,
    Sample,
)
from mcp.server.mcpserver.resolve import Elicit
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp.types import (
    METHOD_NOT_FOUND,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
    ListRootsResult,
    SamplingMessage,
    TextContent,
    ToolAnnotations,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
OLDER = "2025-11-25"


async def older_only(ctx: Any, call_next: Any) -> Any:
    """A 2025-11-25 server over HTTP: `server/discover` is a method it does not know."""
    if ctx.method == "server/discover":
        raise MCPError(code=METHOD_NOT_FOUND, message="Method not found")
    return await call_next(ctx)


def _revision() -> str | None:
    return sys.argv[sys.argv.index("--revision") + 1] if "--revision" in sys.argv else None


server: MCPServer[Any] = MCPServer(
    "ducklm-test", middleware=[older_only] if _revision() == OLDER else None
)


@server.tool(annotations=READ_ONLY)
def read_note(name: str) -> str:
    """Read the note called `name`."""
    return f"note {name}: buy milk"


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True))
def fetch_page(url: str) -> str:
    """Fetch a web page (read-only, but it reaches the open world)."""
    return f"page {url}"


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def delete_note(name: str) -> str:
    """Delete the note called `name`."""
    return f"deleted {name}"


@server.tool()
def send(text: str) -> str:
    """Send `text` to a remote service."""
    with Path(os.environ["MCP_TEST_SENT"]).open("a", encoding="utf-8") as sent:
        sent.write(text + "\n")
    return "sent"


@server.tool(annotations=READ_ONLY)
def inject(topic: str = "") -> str:
    """Look up a topic in the wiki."""
    return os.environ.get("MCP_TEST_INJECTION", "nothing here")


@server.tool()
def echo(text: str) -> str:
    """Say `text` back."""
    return text


@server.tool()
def crash() -> str:
    """Die in the middle of the call."""
    print("fatal: the test server was told to crash", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Never answer."""
    await asyncio.sleep(3600)
    return "late"


@server.tool()
def huge() -> str:
    """Answer with a million characters."""
    return "x" * 500_000 + "MIDDLE" + "y" * 500_000


@server.tool(annotations=READ_ONLY)
def environment() -> str:
    """The names of the process's environment variables, and its working folder."""
    return " ".join(sorted(os.environ)) + f"\ncwd={Path.cwd()}"


def ask_roots() -> ListRoots:
    """The client's roots, asked in the revision's way."""
    return ListRoots()


@server.tool()
async def whoami(ctx: Context, roots: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """The client's name and version, and the roots it offers."""
    params = ctx.session.client_params
    info = params.client_info if params else None
    return f"{info.name if info else '?'} {info.version if info else '?'} " + " ".join(
        str(r.uri) for r in roots.roots
    )


@server.tool()
def needs_sign_in() -> str:
    """Answer with a JSON-RPC error (-32042, the one FastMCP passes through as an error)."""
    ask = ElicitRequestURLParams(
        mode="url", message="sign in first", url="https://example.com/sign-in", elicitation_id="e1"
    )
    raise UrlElicitationRequiredError([ask])


@server.tool()
async def wait_for_cancel() -> str:
    """Wait until cancelled, and record that the cancel came (in `MCP_TEST_SENT`)."""
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        # A blocking write, on purpose: the task is being cancelled, and it is one line.
        Path(os.environ["MCP_TEST_SENT"]).write_text("cancelled\n")  # noqa: ASYNC240
        raise
    return "late"


@server.tool()
async def slow_with_progress(ctx: Context, steps: int, pause_s: float) -> str:
    """Report progress `steps` times, `pause_s` apart."""
    for step in range(steps):
        await asyncio.sleep(pause_s)
        await ctx.report_progress(step + 1, steps, f"step {step + 1}")
    return "done"


class Trip(BaseModel):
    """The form `book_trip` asks the person to fill in."""

    city: str = Field(description="Where to")
    nights: int = Field(default=2, description="How many nights")
    seat: str = Field(default="window", json_schema_extra={"enum": ["window", "aisle"]})


def ask_trip() -> Elicit[Trip]:
    """The form `book_trip` asks."""
    return Elicit("Where should the trip go?", Trip)


@server.tool()
async def book_trip(answer: Annotated[ElicitationResult[Trip], Resolve(ask_trip)]) -> str:
    """Book a trip: asks the person where to (elicitation), then records the booking."""
    if answer.action != "accept":
        return f"not booked: the person chose {answer.action}"
    booked = answer.data
    # Recorded only after the answer: a test counts the bookings (nothing runs twice).
    line = f"booked {booked.city} {booked.nights} {booked.seat}"
    await asyncio.to_thread(send, line)
    return f"booked {booked.city} for {booked.nights} nights, {booked.seat} seat"


class Party(BaseModel):
    """The form `reserve_table` asks the person to fill in."""

    people: int = Field(description="How many people")


@server.tool()
async def reserve_table(ctx: Context) -> str:
    """Reserve a table: notes that it started, then asks how many (2025-11-25 only)."""
    # Noted before the question: a test counts the starts (the call is made once).
    await asyncio.to_thread(send, "reserve started")
    answer = await ctx.elicit("How many people?", Party)
    if answer.action != "accept":
        return f"not reserved: the person chose {answer.action}"
    await asyncio.to_thread(send, f"reserved for {answer.data.people}")
    return f"reserved for {answer.data.people}"


def ask_summary(text: str) -> Sample:
    """What `summarize` asks the client's model."""
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=text))],
        max_tokens=50,
        system_prompt="Summarize in five words.",
    )


@server.tool()
async def summarize(text: str, result: Annotated[CreateMessageResult, Resolve(ask_summary)]) -> str:
    """Summarize `text` with the client's model (sampling)."""
    content = result.content
    words = content.text if isinstance(content, TextContent) else str(content)
    return f"summary by {result.model}: {words}"


PAY_LINK = "https://pay.example.com/order/7?step=confirm"


@server.tool()
async def open_link(ctx: Context, url: str = PAY_LINK) -> str | InputRequiredResult:
    """Ask the person to pay in their browser (URL-mode elicitation); record the answer."""
    capabilities = ctx.client_capabilities
    asked = capabilities.elicitation if capabilities else None
    if asked is None or asked.url is None:  # the spec: only a client that offers URL mode
        return "the client does not take links"
    message, elicitation_id = "Pay for order 7 in your browser", str(uuid.uuid4())
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answered = (ctx.input_responses or {}).get("link")
        if not isinstance(answered, ElicitResult):
            link = ElicitRequestURLParams(message=message, url=url, elicitation_id=elicitation_id)
            return InputRequiredResult(input_requests={"link": ElicitRequest(params=link)})
        action, content = answered.action, answered.content
    else:
        answer = await ctx.elicit_url(message, url, elicitation_id)
        action, content = answer.action, None  # a URL-mode answer carries no content
    # Recorded only after the answer: a test reads what reached the server, once.
    await asyncio.to_thread(send, f"link {action} {content}")
    return f"the person chose {action}"


@server.tool()
def pay_first(order: str = "7") -> str:
    """Needs the person to pay in their browser first (URL mode's error path, -32042).

    The browser flow is out of band: a test stands for it by writing `paid <order>` to
    `MCP_TEST_SENT`; until then every call answers the error.
    """
    sent = Path(os.environ["MCP_TEST_SENT"])
    if f"paid {order}" not in (sent.read_text() if sent.exists() else "").splitlines():
        link = ElicitRequestURLParams(
            mode="url", message=f"Pay for order {order} first", url=PAY_LINK, elicitation_id="p1"
        )
        raise UrlElicitationRequiredError([link])
    return f"order {order} paid"


@server.resource("notes://shop", name="shop", description="The shopping list")
def shop_note() -> str:
    """The shopping list, as a resource."""
    return "milk, eggs"


def serve_http() -> None:
    """Streamable HTTP on a port the kernel picks; the port is the first line printed."""
    import uvicorn

    # IPPROTO_TCP named, so asyncio sets TCP_NODELAY on each connection (it checks the
    # protocol): with Nagle on, a reply's second write waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


async def serve_older_stdio() -> None:
    """stdio as a 2025-11-25 server: the handshake's loop only (the SDK's own serves both)."""
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read, write), lowlevel.lifespan(lowlevel) as state:
        options = lowlevel.create_initialization_options()
        await serve_loop(lowlevel, read, write, lifespan_state=state, init_options=options)


if __name__ == "__main__":
    if "--http" in sys.argv:
        serve_http()
    elif _revision() == OLDER:
        asyncio.run(serve_older_stdio())
    else:
        server.run("stdio")
