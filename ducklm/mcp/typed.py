"""What the person typed, with its MCP parts expanded: a prompt run, resources attached.

`/server:prompt words...` (first in the message) runs that server's prompt: its messages
are what the person sends (`prompts.py`). `@server:uri` anywhere attaches that resource
(`mentions.py`); in a prompt's line a mention is an attachment, not an argument. Only
configured servers count: any other text is sent as typed. Both are the person's own
act, so the door asks nothing; what was sent is told by a `message_sent` event, and an
untrusted server's resource makes the conversation untrusted (`conversation_untrusted`)
as its tool results do.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from ducklm.kit.events import Event, event
from ducklm.mcp.errors import TypedInputError
from ducklm.mcp.mentions import TRAILING, Attachment, Mention, attach, find_mentions
from ducklm.mcp.prompts import SentMessage, bind_arguments, find_prompt, get_prompt
from ducklm.mcp.server import McpServer
from ducklm.mcp.servers import McpServers
from ducklm.tools.trust import Taint

COMMAND = re.compile(r"/(?P<server>[A-Za-z0-9_.-]+):(?P<prompt>\S+)")
BAD_QUOTES = "the arguments of {command} are not quoted right: {why}"
NO_MESSAGES = "{command} gave no messages to send"


@dataclass
class Typed:
    """A message ready for the graph: its messages, attachments and what to tell."""

    typed: str
    sent: list[SentMessage]
    attachments: list[Attachment] = field(default_factory=list)
    prompt: str | None = None
    """`/server:prompt` when the message ran a prompt."""

    @property
    def taint(self) -> Taint | None:
        """The first attachment that makes the conversation untrusted."""
        return next((a.taint for a in self.attachments if a.taint is not None), None)

    def messages(self) -> list[BaseMessage]:
        """The graph's new messages; attachments follow the last message of the person."""
        out: list[BaseMessage] = [
            HumanMessage(m.text) if m.role == "user" else AIMessage(m.text) for m in self.sent
        ]
        extra = "\n\n".join(a.text for a in self.attachments)
        if not extra:
            return out
        if out and isinstance(out[-1], HumanMessage):
            out[-1] = HumanMessage(f"{out[-1].text}\n\n{extra}")
        else:
            out.append(HumanMessage(extra))
        return out

    def opening(self, *, tainted: bool) -> tuple[Event, ...]:
        """The events that open the run: what was sent, and a new taint."""
        sent = event(
            "message_sent",
            typed=self.typed,
            prompt=self.prompt,
            messages=[{"role": m.role, "text": m.text} for m in self.sent],
            attachments=[a.event_fields() for a in self.attachments],
        )
        taint = None if tainted else self.taint
        if taint is None:
            return (sent,)
        return (sent, event("conversation_untrusted", **taint.event_fields()))


def has_mcp_parts(text: str, mcp: McpServers) -> bool:
    """Whether `text` runs a prompt or mentions a resource of a configured server."""
    names = {s.spec.name for s in mcp.servers}
    return _command(text, names) is not None or bool(find_mentions(text, names))


async def expand(text: str, mcp: McpServers) -> Typed:
    """`text` with its prompt run and its mentions read.

    Raises:
        TypedInputError: An unknown prompt, bad or missing arguments, a server that is
            down, a resource that could not be read; the message says which.
    """
    names = {s.spec.name for s in mcp.servers}
    command = _command(text, names)
    mentions = find_mentions(text, names)
    wanted = {m.server for m in mentions} | ({command[0]} if command else set())
    await mcp.ensure(sorted(wanted))
    servers = {s.spec.name: s for s in mcp.servers}
    attachments = [await attach(servers[m.server], m) for m in mentions]
    if command is None:
        return Typed(text, [SentMessage("user", text)], attachments)
    server, prompt, rest = command
    sent = await _run_prompt(servers[server], prompt, rest, mentions)
    return Typed(text, sent, attachments, prompt=f"/{server}:{prompt}")


def _command(text: str, names: set[str]) -> tuple[str, str, str] | None:
    head, _, rest = text.strip().partition(" ")
    match = COMMAND.fullmatch(head)
    if match is None or match["server"] not in names:
        return None
    return match["server"], match["prompt"], rest


async def _run_prompt(
    server: McpServer, name: str, rest: str, mentions: list[Mention]
) -> list[SentMessage]:
    prompt = await find_prompt(server, name)
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise TypedInputError(BAD_QUOTES.format(command=prompt.command, why=exc)) from None
    labels = {m.label for m in mentions}
    arguments = bind_arguments(prompt, [w for w in words if w.rstrip(TRAILING) not in labels])
    sent = _merged(await get_prompt(server, name, arguments))
    if not sent:
        raise TypedInputError(NO_MESSAGES.format(command=prompt.command))
    return sent


def _merged(messages: list[SentMessage]) -> list[SentMessage]:
    """Consecutive messages of one role as one: a turn reads one message per speaker."""
    merged: list[SentMessage] = []
    for message in messages:
        if merged and merged[-1].role == message.role:
            merged[-1] = SentMessage(message.role, f"{merged[-1].text}\n\n{message.text}")
        else:
            merged.append(message)
    return merged
