"""The messages a role sees, packed into the token budget (`ducklm.turn.prompting.budget`).

System prompt, skills, memories, the running summary and history: every node that
calls a model with the conversation goes through `role_messages`, so no request is
ever sent over `DUCK_MAX_INPUT_TOKENS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.messages import BaseMessage

from ducklm.graph.state import DuckState
from ducklm.learning.skills import render_skills
from ducklm.models.tokens import estimate_tokens, prefetched
from ducklm.tools.coder_tools import CODER_TOOL_NAMES
from ducklm.tools.registry import ToolRegistry
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


async def pack_for_role(
    state: DuckState, ctx: DuckContext, system: str, *, native_tools: bool = False
) -> PackedContext:
    """Pack the state for one model call; `dropped` is history the summary should cover."""
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
    tools = offered_tools(state, ctx).prompt_tokens() if native_tools else 0
    count = await prefetched(ctx.tokens, countable_texts(parts))
    return pack_context(parts, Budget.from_settings(ctx.settings, tools_tokens=tools), count)


async def role_messages(
    state: DuckState,
    ctx: DuckContext,
    system: str,
    *,
    native_tools: bool = False,
    fold_tools: bool = False,
) -> list[BaseMessage]:
    """The messages to send: packed, and for roles without tools, tool traffic as text.

    `fold_tools`: this turn's tool results go inside its request (`fold_turn`).
    """
    packed = await pack_for_role(state, ctx, system, native_tools=native_tools)
    if native_tools:
        return packed.messages
    rest = fold_turn(packed.messages[1:]) if fold_tools else packed.messages[1:]
    return [packed.messages[0], *as_text(rest)]


def offered_tools(state: DuckState, ctx: DuckContext) -> ToolRegistry:
    """The tools this turn offers the action role.

    The coder's only when routed to it; the MCP tools chosen when the turn started,
    while their servers run.
    """
    coder = state.route is not None and state.route.coder
    base = ctx.tools if coder else ctx.tools.without(CODER_TOOL_NAMES)
    chosen = set(state.mcp_tools)
    return base.plus(t for t in ctx.mcp.tools() if t.name in chosen)
