"""route: decide what the turn needs before anything else runs.

The rules of `ducklm.turn.router` decide from the request and a few facts of the run; only
when they cannot (a long request without sequence markers, code mentioned without a
verb) the `sys_util` role answers one small JSON question. The decision is a
`route_decided` event with a reason per decision, and the graph's edges follow it:
recall runs or returns at once, a multi-step task gets a plan, the coder tools are
offered, the critic reviews. Where the rules found no call for a one-call turn, the
tool is chosen by meaning (`ducklm.turn.choosing.selector`, over the embedding model
recall already loaded). The node also clears the previous turn's plan.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from ducklm.graph.state import DuckState
from ducklm.kit.events import emit
from ducklm.tools.coder_tools import CODER_TOOL_NAMES
from ducklm.turn.prompting.structured import ask_json, system_prompt, with_system
from ducklm.turn.prompting.transcript import latest_request
from ducklm.turn.router import (
    Route,
    RouteAnswer,
    RouteFacts,
    decide_route,
    merge_answer,
    merge_selection,
    route_question,
    wants_selection,
)

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext
    from ducklm.turn.choosing.selector import Selection

log = logging.getLogger(__name__)

# What a turn starts without: plans and coder proposals belong to the turn that made them.
FRESH_TURN: dict[str, Any] = {
    "plan": None,
    "plan_status": {},
    "plan_results": {},
    "current_step": "",
    "step_attempts": 0,
    "step_feedback": "",
    "plan_revisions": 0,
    "step_started_at": 0,
    "code_proposals": {},
}


async def decide_turn_route(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Route the turn; ask `sys_util` only for what the rules leave undecided."""
    ctx = runtime.context
    task = latest_request(state.messages)
    facts = route_facts(ctx)
    route = _decide(task, facts)
    if route.undecided:
        route = merge_answer(route, await _ask_sys_util(ctx, task))
    if _may_select(ctx) and wants_selection(route, facts, task):
        offered = facts.tools - CODER_TOOL_NAMES  # the coder's are offered only to code work
        route = merge_selection(route, await _select(ctx, task, offered))
    emit(runtime, "route_decided", **route.event_fields())
    update = {"route": route, **FRESH_TURN}
    # Only what changed: each written field is another blob in the checkpoint.
    return {key: value for key, value in update.items() if getattr(state, key) != value}


def rules_route(state: DuckState, ctx: DuckContext) -> Route:
    """What the rules decide for this turn's request; pure and cheap (no model).

    recall and context run beside the route node, in the same superstep (one more
    superstep would cost the first token about 4 ms), so they read their decisions here:
    recall and critique are always decided by the rules, never by sys_util.
    """
    return _decide(latest_request(state.messages), route_facts(ctx))


def route_facts(ctx: DuckContext) -> RouteFacts:
    """The facts of the run the rules read."""
    return RouteFacts(
        recall_enabled=ctx.memory is not None,
        memory_has_records=any(s is not None and s.has_records for s in (ctx.memory, ctx.episodes)),
        critic_enabled=ctx.critic_enabled,
        tools=frozenset(ctx.tools.names),
        # Models that call tools natively pick these calls well and may combine them;
        # shortcuts are for the ones that write JSON directives.
        shortcuts=ctx.models.config("action").tool_mode == "json",
        other_tools=bool(ctx.mcp.servers),
    )


# route, context and recall each ask the rules about the same request in one superstep
# (about 35 us a call: a dozen regexes); `Route` is frozen, so they can share the answer.
_decide = lru_cache(maxsize=64)(decide_route)


def _may_select(ctx: DuckContext) -> bool:
    # While the embedding model loads (`ducklm serve` warms it up) the turn does not wait.
    return ctx.settings.tool_selector and ctx.memory is not None and not ctx.embeddings.loading


async def _select(ctx: DuckContext, task: str, offered: frozenset[str]) -> Selection | None:
    assert ctx.memory is not None
    try:
        return await ctx.selector.select(task, offered, ctx.memory.embedder.embed)
    except Exception:  # the embedding model is another component's: the model decides
        log.warning("the tool selector failed", exc_info=True)
        return None


async def _ask_sys_util(ctx: DuckContext, task: str) -> Any:
    schema = RouteAnswer.model_json_schema()
    system = system_prompt(ctx, "sys_util", schema)
    try:
        _, raw = await ask_json(
            ctx,
            "sys_util",
            "RouteAnswer",
            schema,
            with_system(system, [HumanMessage(route_question(task))]),
        )
    except Exception:  # the rules' conservative choice stands; the reason says so
        log.warning("sys_util could not answer the route question", exc_info=True)
        return None
    return raw
