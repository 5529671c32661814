"""context: start a turn.

Reads the request, resets the per-turn fields, fixes the workspace and the turn's
switches, selects the skills that fit the request, and keeps the running summary: when
the history no longer fits the input budget, the summary role folds the oldest part
into `summary`, which every role then sees instead of those messages.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from ducklm.graph.state import DuckState
from ducklm.kit.events import emit
from ducklm.kit.workspaces import resolve_workspace
from ducklm.learning.skills import Embed
from ducklm.mcp.selection import choose_tools
from ducklm.models.tokens import estimate_tokens, fit_head_tail
from ducklm.nodes.route import rules_route
from ducklm.turn.prompting.budget import ContextBudgetError
from ducklm.turn.prompting.messages import pack_for_role
from ducklm.turn.prompting.structured import with_system
from ducklm.turn.prompting.transcript import latest_request, transcript_text

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

log = logging.getLogger(__name__)

SUMMARY_REQUEST = "Summary so far:\n{summary}\n\nOlder messages to fold in:\n{messages}"
SUMMARY_FAILED = "Older history could not be summarized; it is left out of this turn."
CUT = "\n[... cut to fit ...]\n"


async def prepare_turn(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Start the turn: fresh per-turn fields, switches, skills, and the running summary."""
    ctx = runtime.context
    # Checked again at every turn: the doors check what a request names, but a thread may
    # carry a workspace from before the person narrowed DUCK_WORKSPACES, or get one from a
    # door that checks nothing (a client editing the state, `langgraph dev`). A folder no
    # longer allowed raises WorkspaceError, and the run fails with its message.
    workspace = str(await resolve_workspace(ctx.settings, state.workspace))
    task = latest_request(state.messages)
    # While the embedding model loads, skills and MCP tools are chosen by their words only.
    ready = ctx.memory is not None and not ctx.embeddings.loading
    embed = ctx.memory.embedder.embed if ready and ctx.memory is not None else None
    skills = await ctx.skills.select(task, embed=embed)
    mcp_tools = await _start_mcp(ctx, task, embed, runtime)
    fresh: dict[str, Any] = {
        "task": task,
        "workspace": workspace,
        "step": 0,
        "observations": [],
        "final": "",
        "critique": None,
        "memory_decisions": [],
        "skills": [s.id for s in skills],
        "step_limit": ctx.settings.max_action_steps,
        # The router may leave the critic out (chit-chat) even when the run allows it.
        "run_critic": rules_route(state, ctx).critique,
        "run_memory_policy": ctx.memory_enabled,
        "review_behind": ctx.review_behind,
        "review_due": False,
        "mcp_tools": mcp_tools,
    }
    fresh |= await _summarize_overflow(dataclasses.replace(state, **fresh), runtime)
    # Only what changed: each written field is another blob in the checkpoint.
    return {key: value for key, value in fresh.items() if getattr(state, key) != value}


async def _start_mcp(
    ctx: DuckContext, task: str, embed: Embed | None, runtime: Runtime[DuckContext]
) -> list[str]:
    """Start the MCP servers (a dead one again); the names of the tools the turn offers."""
    for problem in await ctx.mcp.ensure():
        # Not fatal: the turn goes on without that server's tools, and says so.
        fields = {"server": problem.server, "message": problem.message}
        emit(runtime, "error", stage="mcp", fatal=False, **fields)
    # Never more than half the input budget with DuckLM's own tools: the request,
    # history and answer need the rest.
    room = ctx.settings.max_input_tokens // 2 - ctx.tools.prompt_tokens()
    budget = max(0, min(ctx.settings.mcp_tool_tokens, room))
    chosen = await choose_tools(ctx.mcp.tools(), task, budget=budget, embed=embed)
    return [t.name for t in chosen]


async def _summarize_overflow(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Fold history that no longer fits into the running summary (nothing when it fits)."""
    ctx = runtime.context
    system = ctx.prompts.render("thinker", workspace=state.workspace)
    try:
        packed = await pack_for_role(state, ctx, system)
    except ContextBudgetError:  # no room even for the request: the answering roles say so
        return {}
    if not packed.dropped:
        return {}
    try:
        summary = await _summarize(ctx, state.summary, packed.dropped)
    except Exception:  # a missing summary costs context, never the turn
        log.warning("summary failed", exc_info=True)
        emit(runtime, "error", stage="summary", fatal=False, message=SUMMARY_FAILED)
        return {}
    return {"summary": summary, "summary_covers": state.summary_covers + len(packed.dropped)}


async def _summarize(ctx: DuckContext, summary: str, dropped: list[BaseMessage]) -> str:
    system = ctx.prompts.render("summary")
    room = ctx.settings.max_input_tokens - estimate_tokens(system) - 64
    older = fit_head_tail(
        transcript_text(dropped, last=len(dropped)), room // 2, estimate_tokens, CUT
    )
    request = SUMMARY_REQUEST.format(summary=summary or "(none)", messages=older)
    request = fit_head_tail(request, room, estimate_tokens, CUT)
    reply = await ctx.models.chat("summary").ainvoke(with_system(system, [HumanMessage(request)]))
    return reply.text.strip() or summary
