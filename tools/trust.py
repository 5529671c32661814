"""Trust: MCP tools under DuckLM's policy, and untrusted content that can never act alone.

- Every MCP call asks by default. A tool that says `readOnlyHint: true` and not
  `openWorldHint: true`, on a server the person marked trusted, runs unasked (the hints
  are the server's own claims, so only a trusted server's count). Allow-forever rules
  key on server, tool and the arguments normalized (sorted keys, compact JSON): an exact
  match that never widens.
- A tool result is untrusted when it comes from an MCP server not marked trusted, from a
  shell command that used the network, or, with `DUCK_UNTRUSTED_WORKSPACE=1`, from
  reading the workspace. From then on (`Taint`, kept in the state) every call that is
  not read-only asks the person, whatever the policy or an allow-forever rule says, and
  the question names the result that did it. Nothing the model writes clears it.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from ducklm.tools.mcp_info import McpToolInfo
from ducklm.tools.policy import READ_ONLY_TOOLS, Verdict

TRUSTED_READ = "a read-only tool of the trusted MCP server {server}"
MCP_ASKS = "{tool} on the MCP server {server} ({trust})"
DESTRUCTIVE = "; the server says this tool may destroy data"
UNTRUSTED_NOTE = (
    "\n\nThis conversation has read untrusted content: the result of {source} began "
    '"{excerpt}". It may be telling the model to act, so nothing that is not read-only '
    "runs without you."
)
EXCERPT_CHARS = 160
FILE_READERS = frozenset({"file_read", "list_dir", "search_files", "shell_exec"})
"""What reads the workspace, for `DUCK_UNTRUSTED_WORKSPACE` (a shell can `cat` a file);
`search_conversations` reads DuckLM's own records, not the workspace."""


class Taint(BaseModel):
    """The tool result that made the conversation untrusted."""

    model_config = ConfigDict(frozen=True)

    call_id: str
    tool: str
    """The tool as the model called it."""
    server: str | None = None
    """Its MCP server, for MCP tools."""
    reason: str
    """Why that result is untrusted, in words for people."""
    excerpt: str
    """The result's beginning, as the person is shown it."""

    @property
    def source(self) -> str:
        """The result named for people: the tool, and its server."""
        return f"{self.tool} (MCP server {self.server})" if self.server else self.tool

    def event_fields(self) -> dict[str, Any]:
        """The fields of `conversation_untrusted` and of questions asked under it."""
        return self.model_dump()


def assess_mcp(info: McpToolInfo, args: dict[str, Any]) -> Verdict:
    """The policy's verdict on calling the MCP tool `info` with `args`."""
    if info.trusted and info.read_only:
        # read_only: the one kind of call besides DuckLM's read-only tools that gets no
        # workspace checkpoint (`policy.may_change_workspace`; every shell command gets one).
        return Verdict("allow", TRUSTED_READ.format(server=info.server), command_class="read_only")
    trust = "trusted" if info.trusted else "untrusted"
    reason = MCP_ASKS.format(tool=info.tool, server=info.server, trust=trust)
    return Verdict(
        "ask",
        reason + (DESTRUCTIVE if info.destructive else ""),
        rule_key=f"mcp:{info.server}/{info.tool}:{normalized_args(args)}",
    )


def normalized_args(args: dict[str, Any]) -> str:
    """`args` as one canonical text: the same call always gives the same rule."""
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def is_read_only(name: str, info: McpToolInfo | None, verdict: Verdict) -> bool:
    """Whether a call only reads: it may run in an untrusted conversation unasked."""
    if info is not None:
        return info.trusted and info.read_only
    if name == "shell_exec":
        return verdict.command_class == "read_only" and not verdict.network
    return name in READ_ONLY_TOOLS


def under_taint(
    name: str, info: McpToolInfo | None, verdict: Verdict, taint: Taint | None
) -> Verdict:
    """`verdict` in a conversation that `taint` made untrusted: whatever is not read-only asks."""
    if taint is None or verdict.action == "deny" or is_read_only(name, info, verdict):
        return verdict
    note = UNTRUSTED_NOTE.format(source=taint.source, excerpt=taint.excerpt)
    return dataclasses.replace(verdict, action="ask", reason=verdict.reason + note)


def taint_of(
    call_id: str,
    name: str,
    info: McpToolInfo | None,
    verdict: Verdict,
    output: str,
    *,
    untrusted_workspace: bool,
) -> Taint | None:
    """The taint a result that ran brings in, or `None` when it can be believed."""
    if info is not None and not info.trusted:
        reason = f"the MCP server {info.server} is not marked trusted"
    elif name == "shell_exec" and verdict.network:
        reason = "the command used the network"
    elif untrusted_workspace and name in FILE_READERS:
        reason = "it read the workspace, which DUCK_UNTRUSTED_WORKSPACE marks untrusted"
    else:
        return None
    excerpt = " ".join(output.split())[:EXCERPT_CHARS]
    server = info.server if info is not None else None
    return Taint(call_id=call_id, tool=name, server=server, reason=reason, excerpt=excerpt)
