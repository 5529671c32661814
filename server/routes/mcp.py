"""`/v1/mcp/...`: the MCP servers of this server's process, their prompts and resources.

`servers` is the activity drawer's; `prompts` and `resources` feed the composer's
completion list (`ui/mcp-complete.js`), as does `POST prompts/{server}/{name}/complete`
(an argument's values, from the server), and `POST prompts/{server}/{name}` expands one
prompt without sending it. Listing starts the servers that are not running (the person
asked for what they offer); one that cannot start is named in `problems`.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from ducklm.mcp.catalog import from_each
from ducklm.mcp.completion import complete_prompt_argument
from ducklm.mcp.connect import needs_sign_in
from ducklm.mcp.mentions import list_resources
from ducklm.mcp.prompts import check_arguments, find_prompt, get_prompt, list_prompts
from ducklm.mcp.server import McpServer
from ducklm.mcp.servers import McpServers
from ducklm.server.deps import Duck
from ducklm.server.responses import McpServersView, McpServerView, errors

router = APIRouter(tags=["mcp"])
UNKNOWN_SERVER = "no MCP server {name!r} is configured"
NO_ARGUMENT = "{command} has no argument {name!r}"


class Problem(BaseModel):
    """A server whose list could not be had, and why."""

    server: str
    message: str


class PromptArgumentView(BaseModel):
    """One argument of a prompt."""

    name: str
    description: str = ""
    required: bool = False


class PromptView(BaseModel):
    """A prompt, as the composer offers it: `command` is what the person types."""

    server: str
    name: str
    command: str
    description: str = ""
    arguments: list[PromptArgumentView] = []


class PromptsView(BaseModel):
    """The prompts of the running servers."""

    prompts: list[PromptView]
    problems: list[Problem] = []


class ResourceView(BaseModel):
    """A resource a server lists: `mention` is what the person types to attach it.

    With `template`, `uri` is a URI template (`resources/templates/list`): the person
    fills its `{...}` parts before sending.
    """

    server: str
    uri: str
    mention: str
    name: str = ""
    description: str = ""
    mime_type: str = ""
    template: bool = False


class ResourcesView(BaseModel):
    """The resources of the running servers."""

    resources: list[ResourceView]
    problems: list[Problem] = []


class PromptArguments(BaseModel):
    """The arguments of one prompt, by name."""

    model_config = {"extra": "forbid"}
    arguments: dict[str, str] = Field(default_factory=dict)


class CompletionAsked(BaseModel):
    """What the person is typing: one argument's value so far, and those already given."""

    model_config = {"extra": "forbid"}
    argument: str = Field(min_length=1)
    value: str = ""
    arguments: dict[str, str] = Field(default_factory=dict)


class CompletionView(BaseModel):
    """The server's values for the argument (none when it does not complete)."""

    values: list[str]
    has_more: bool = False


class SentMessageView(BaseModel):
    """One message of an expanded prompt."""

    role: Literal["user", "assistant"]
    text: str


class ExpandedPrompt(BaseModel):
    """What running the prompt would send."""

    command: str
    messages: list[SentMessageView]


@router.get("/mcp/servers")
async def mcp_servers(duck: Duck) -> McpServersView:
    """Each enabled server as this process holds it (`stopped` until a turn starts them)."""
    return McpServersView(
        servers=[
            McpServerView(
                name=server.spec.name,
                transport=server.spec.transport,
                trust=server.spec.trust,
                state=server.state,
                tools=len(server.tools),
                error=server.error,
                needs_sign_in=needs_sign_in(server),
            )
            for server in duck.context.mcp.servers
        ]
    )


@router.get("/mcp/prompts")
async def mcp_prompts(duck: Duck) -> PromptsView:
    """Every prompt of every server (started if need be), for `/server:prompt`."""
    found, problems = await _gather(duck.context.mcp, list_prompts)
    return PromptsView(
        prompts=[PromptView.model_validate(p.wire()) for p in found], problems=problems
    )


@router.get("/mcp/resources")
async def mcp_resources(duck: Duck) -> ResourcesView:
    """Every resource and URI template of the servers (started if need be), for `@server:uri`."""

    async def listed(server: McpServer) -> list[ResourceView]:
        name = server.spec.name
        return [
            ResourceView(server=name, mention=f"@{name}:{r['uri']}", **r)
            for r in await list_resources(server)
        ]

    found, problems = await _gather(duck.context.mcp, listed)
    return ResourcesView(resources=found, problems=problems)


@router.post("/mcp/prompts/{server}/{name}", responses=errors(404, 422))
async def expand_prompt(
    server: str, name: str, body: PromptArguments, duck: Duck
) -> ExpandedPrompt:
    """The messages the prompt gives with these arguments (`prompts/get`); nothing is sent."""
    held = await _started(duck.context.mcp, server)
    prompt = await find_prompt(held, name)
    arguments = check_arguments(prompt, body.arguments)
    messages = await get_prompt(held, name, arguments)
    return ExpandedPrompt(
        command=prompt.command,
        messages=[SentMessageView(role=m.role, text=m.text) for m in messages],
    )


@router.post("/mcp/prompts/{server}/{name}/complete", responses=errors(404, 422))
async def complete_argument(
    server: str, name: str, body: CompletionAsked, duck: Duck
) -> CompletionView:
    """The server's values for one argument of the prompt (`completion/complete`)."""
    held = await _started(duck.context.mcp, server)
    prompt = await find_prompt(held, name)
    if body.argument not in {a.name for a in prompt.arguments}:
        raise HTTPException(422, NO_ARGUMENT.format(command=prompt.command, name=body.argument))
    values, more = await complete_prompt_argument(
        held, name, body.argument, body.value, body.arguments
    )
    return CompletionView(values=values, has_more=more)


async def _started(mcp: McpServers, server: str) -> McpServer:
    """The configured server named `server`, started if need be; 404 when there is none."""
    held = next((s for s in mcp.servers if s.spec.name == server), None)
    if held is None:
        raise HTTPException(404, UNKNOWN_SERVER.format(name=server))
    await mcp.ensure([server])
    return held


async def _gather(mcp: McpServers, each: Any) -> tuple[list[Any], list[Problem]]:
    found, problems = await from_each(mcp, each)
    return found, [Problem(server=name, message=why) for name, why in problems]
