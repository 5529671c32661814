"""The messages a role sees, packed into the token budget (`ducklm.turn.prompting.budget`).

System prompt, skills, memories, the running summary and history: every node that
calls a model with the conversation goes through `role_messages`, so no request is
ever sent over `DUCK_MAX_INPUT_TOKENS`, nor over the window the role's server serves
(`ducklm.models.context_size`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from langchain_core.messages import BaseMessage

from ducklm.graph.state import DuckState
from ducklm.learning.skills import render_skills
from ducklm.models.roles import RoleName
from ducklm.models.tokens import estimate_tokens, prefetched
from ducklm.tools.coder_tools import CODER_TOOL_NAMES
from ducklm.tools.file_ops import FILE_OP_NAMES
from ducklm.tools.registry import ToolRegistry
from ducklm.turn.file_requests import mentioned_operation
from ducklm.turn.prompting.budget import (
    Budget,
    ContextParts,
    PackedContext,
    countable_texts,
    pack_context,
    split_at_request,
)
from ducklm.turn.prompting.recalled import recalled_line
from ducklm.turn.prompting.transcript import as_text, fold_turn, for_native_tools

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext


@dataclass(frozen=True)
class RoleRequest:
    """The messages of one model call, and what DuckLM counts them to."""

    messages: list[BaseMessage]
    tokens: int
    """The packed messages with chat-template overhead."""
    tools_tokens: int = 0
    """The bound tools' schemas (estimated)."""
    essential: int = 0
    """What no packing leaves out: the system prompt and the request."""

    @property
    def sent(self) -> int:
        """All of it: about what the server should report reading (`ducklm.models.prompt_usage`)."""
        return self.tokens + self.tools_tokens

    @property
    def needed(self) -> int:
        """The input this request cannot do without: its essentials and its tools."""
        return self.essential + self.tools_tokens


async def pack_for_role(
    state: DuckState,
    ctx: DuckContext,
    system: str,
    *,
    role: RoleName = "thinker",
    native_tools: bool = False,
    shrink: bool = False,
) -> PackedContext:
    """Pack the state for one model call; `dropped` is history the summary should cover.

    `role`: whose server's window bounds the budget (`ducklm.models.context_size`).
    `shrink`: after the server cut a request: smaller sections, fewer tools.
    """
    tools = offered_tools(state, ctx, shrink=shrink).prompt_tokens() if native_tools else None
    return await _pack(state, ctx, system, role=role, tools_tokens=tools, shrink=shrink)


async def _pack(
    state: DuckState,
    ctx: DuckContext,
    system: str,
    *,
    role: RoleName,
    tools_tokens: int | None,
    shrink: bool,
) -> PackedContext:
    """`tools_tokens`: the bound tools' cost for a native-tools role; None without tools."""
    native_tools = tools_tokens is not None
    # What the running summary already covers is not sent again.
    history = list(state.messages[state.summary_covers :])
    recent, request, turn = split_at_request(for_native_tools(history) if native_tools else history)
    skills = [s for s in map(ctx.skills.get, state.skills) if s is not None]
    parts = ContextParts(
        system=system,
        request=request,
        skills=render_skills(skills, ctx.settings.max_skill_tokens, estimate_tokens),
        memories=[recalled_line(m) for m in state.recalled],
        recent=recent,
        turn=turn,
        summary=state.summary,
    )
    count = await prefetched(ctx.tokens, countable_texts(parts))
    budget = await role_budget(ctx, role, tools_tokens=tools_tokens or 0)
    return pack_context(parts, budget.shrunk() if shrink else budget, count)


async def role_budget(ctx: DuckContext, role: RoleName, *, tools_tokens: int = 0) -> Budget:
    """The operator's budget, within the window `role`'s server serves."""
    settings = ctx.settings
    config = ctx.models.config(role)
    room = await ctx.context_sizes.budget(config, settings.max_input_tokens, settings.ctx_size)
    return Budget.from_settings(settings, max_input_tokens=room, tools_tokens=tools_tokens)


async def role_request(
    state: DuckState,
    ctx: DuckContext,
    system: str,
    *,
    role: RoleName,
    native_tools: bool = False,
    fold_tools: bool = False,
    shrink: bool = False,
) -> RoleRequest:
    """The messages to send: packed, and for roles without tools, tool traffic as text.

    `fold_tools`: this turn's tool results go inside its request (`fold_turn`).
    """
    tools = offered_tools(state, ctx, shrink=shrink).prompt_tokens() if native_tools else None
    packed = await _pack(state, ctx, system, role=role, tools_tokens=tools, shrink=shrink)
    if tools is not None:
        return RoleRequest(packed.messages, packed.tokens, tools, packed.essential)
    rest = fold_turn(packed.messages[1:]) if fold_tools else packed.messages[1:]
    messages = [packed.messages[0], *as_text(rest)]
    return RoleRequest(messages, packed.tokens, essential=packed.essential)


async def role_messages(
    state: DuckState,
    ctx: DuckContext,
    system: str,
    *,
    role: RoleName = "thinker",
    native_tools: bool = False,
    fold_tools: bool = False,
) -> list[BaseMessage]:
    """`role_request`'s messages."""
    request = await role_request(
        state, ctx, system, role=role, native_tools=native_tools, fold_tools=fold_tools
    )
    return request.messages


def offered_tools(state: DuckState, ctx: DuckContext, *, shrink: bool = False) -> ToolRegistry:
    """The tools this turn offers the action role.

    The coder's only when routed to it; the MCP tools chosen when the turn started,
    while their servers run, unless `shrink` (the server cut a request): DuckLM's own
    tools are the last thing a request gives up.
    """
    coder = state.route is not None and state.route.coder
    base = ctx.tools if coder else ctx.tools.without(CODER_TOOL_NAMES)
    if not mentioned_operation(state.task).operations:
        # Delete, move, copy, append: offered when the request names one (their schemas
        # and examples cost a small model's prompt on every other turn).
        base = base.without(FILE_OP_NAMES)
    chosen = set() if shrink else set(state.mcp_tools)
    return base.plus(t for t in ctx.mcp.tools() if t.name in chosen)
