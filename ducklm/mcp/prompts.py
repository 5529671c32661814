"""A server's prompts as the person's slash commands: `/server:prompt arg=value ...`.

`prompts/list` gives each prompt's name, description and arguments (cached per session,
read again after `notifications/prompts/list_changed`: `catalog.py`). Running one binds
the words typed to its arguments (`name=value`, or bare values in the prompt's argument
order), asks the server for it (`prompts/get`) and turns its messages into text: what
the person sends. Content other than text is rendered as a tool result's is
(`content.py`: media saved under the media folder and named by path).
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ducklm.mcp.catalog import guarded, listed, page, running_session
from ducklm.mcp.content import render_result
from ducklm.mcp.errors import TypedInputError

if TYPE_CHECKING:
    from mcp import ClientSession

    from ducklm.mcp.running import RunningServer

UNKNOWN_PROMPT = "the MCP server {server!r} has no prompt {name!r}{known}"
MISSING = "/{server}:{name} needs {missing}"
UNKNOWN_ARGUMENTS = "/{server}:{name} takes no argument {unknown} (it takes {known})"
TOO_MANY = "/{server}:{name} takes {count} argument(s) ({known}); {given} were given"
TWICE = "/{server}:{name} was given {arg!r} twice"


@dataclass(frozen=True)
class PromptArgument:
    """One argument of a prompt."""

    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class PromptInfo:
    """One prompt a server offers, as the completion list and the API show it."""

    server: str
    name: str
    description: str = ""
    arguments: list[PromptArgument] = field(default_factory=list)

    @property
    def command(self) -> str:
        """What the person types: `/server:prompt`."""
        return f"/{self.server}:{self.name}"

    def wire(self) -> dict[str, Any]:
        """The prompt as JSON, with its command."""
        return {**asdict(self), "command": self.command}


@dataclass(frozen=True)
class SentMessage:
    """One message of an expanded prompt: whose it is, and its text."""

    role: Literal["user", "assistant"]
    text: str


async def list_prompts(server: RunningServer) -> list[PromptInfo]:
    """The prompts `server` offers (none when it has no `prompts` capability).

    Raises:
        TypedInputError: The server is not running, or could not list them.
    """
    return await listed(server, "prompts", lambda s: _fetch(server.spec.name, s))


async def _fetch(server: str, session: ClientSession) -> list[PromptInfo]:
    found: list[PromptInfo] = []
    cursor: str | None = None
    while True:
        got = await session.list_prompts(params=page(cursor))
        found.extend(_info(server, p) for p in got.prompts)
        cursor = got.next_cursor
        if not cursor:
            return found


def _info(server: str, prompt: Any) -> PromptInfo:
    arguments = [
        PromptArgument(a.name, a.description or "", bool(a.required))
        for a in prompt.arguments or ()
    ]
    return PromptInfo(server, prompt.name, prompt.description or "", arguments)


async def find_prompt(server: RunningServer, name: str) -> PromptInfo:
    """The prompt `name` of `server`.

    Raises:
        TypedInputError: No such prompt (the message lists the server's prompts).
    """
    prompts = await list_prompts(server)
    for prompt in prompts:
        if prompt.name == name:
            return prompt
    known = f" (it has {', '.join(p.name for p in prompts)})" if prompts else " (it has none)"
    raise TypedInputError(UNKNOWN_PROMPT.format(server=server.spec.name, name=name, known=known))


def bind_arguments(prompt: PromptInfo, words: list[str]) -> dict[str, str]:
    """The words typed after `/server:prompt` as its arguments.

    `name=value` names an argument; a bare word takes the next argument in the prompt's
    order that was not named.

    Raises:
        TypedInputError: An unknown or repeated argument, too many values, or a required
            argument missing; the message names them.
    """
    names = [a.name for a in prompt.arguments]
    named: dict[str, str] = {}
    bare: list[str] = []
    for word in words:
        key, sep, value = word.partition("=")
        if sep and key in names:
            if key in named:
                raise TypedInputError(_words(TWICE, prompt, arg=key))
            named[key] = value
        elif sep and key.isidentifier():
            raise TypedInputError(_words(UNKNOWN_ARGUMENTS, prompt, unknown=repr(key)))
        else:
            bare.append(word)
    free = [n for n in names if n not in named]
    if len(bare) > len(free):
        raise TypedInputError(_words(TOO_MANY, prompt, count=len(names), given=len(words)))
    return check_arguments(prompt, named | dict(zip(free, bare, strict=False)))


def check_arguments(prompt: PromptInfo, given: dict[str, str]) -> dict[str, str]:
    """`given` when it names only the prompt's arguments and every required one.

    Raises:
        TypedInputError: An unknown argument, or required ones missing (named).
    """
    unknown = [k for k in given if k not in {a.name for a in prompt.arguments}]
    if unknown:
        shown = ", ".join(repr(k) for k in unknown)
        raise TypedInputError(_words(UNKNOWN_ARGUMENTS, prompt, unknown=shown))
    missing = [a.name for a in prompt.arguments if a.required and not given.get(a.name)]
    if missing:
        raise TypedInputError(_words(MISSING, prompt, missing=_listing(missing)))
    return dict(given)


def _words(template: str, prompt: PromptInfo, **more: Any) -> str:
    known = ", ".join(a.name + ("" if a.required else "?") for a in prompt.arguments) or "none"
    return template.format(server=prompt.server, name=prompt.name, known=known, **more)


def _listing(missing: list[str]) -> str:
    shown = [repr(m) for m in missing]
    noun = "argument" if len(shown) == 1 else "arguments"
    joined = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
    return f"the {noun} {joined}"


async def get_prompt(
    server: RunningServer, name: str, arguments: dict[str, str]
) -> list[SentMessage]:
    """The prompt's messages, rendered as text (`prompts/get`).

    Raises:
        TypedInputError: The server is not running or refused (its error message says why).
    """
    session = running_session(server)
    result = await guarded(server, f"get its prompt {name!r}", session.get_prompt(name, arguments))
    return await asyncio.to_thread(_render, result.messages, server)


def _render(messages: list[Any], server: RunningServer) -> list[SentMessage]:
    from mcp import types  # noqa: PLC0415  loaded with the session

    rendered = []
    for message in messages:
        block = types.CallToolResult(content=[message.content])
        rendered.append(SentMessage(message.role, render_result(block, server.media_dir).text))
    return rendered
