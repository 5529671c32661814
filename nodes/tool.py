"""tool: run the tool calls of the last action, asking a person first where policy says so.

The rule: every question a step needs (approvals, then sudo passwords) is asked before
any call of that step runs. LangGraph re-runs a node from its top when a paused run
resumes, so whatever ran before a later question would run again, or be reported as
"already ran" with its output lost. So the node works in two phases:

1. Questions, free of side effects: plan every call (policy, allow-forever rules), ask
   the approvals in one interrupt, fold the decisions in (an edit is assessed again),
   then ask the password of each call that will run through sudo. Passwords stay in
   the vault as one-time tokens until the last answer is in (`ask_passwords`).
2. Running, after the last answer: emit `tool_call_started`, write allow-forever rules,
   record shell intents, run, emit `tool_call_finished`; one ToolMessage per call. Each
   call is a LangGraph task (`server_asks.py`), so an MCP server's question during a call
   pauses the step without running its finished calls again.

A call identical to one the turn declined or already ran is neither asked nor run: it
gets the earlier outcome (`ducklm/turn/tool_step/repeats.py`, read from the messages).

A shell command records an intent before it starts, so a run resumed after a crash
reports "outcome unknown" instead of starting it again (and asks no password for it).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.runtime import Runtime

from ducklm.graph.state import DuckState
from ducklm.kit.events import emit
from ducklm.tools.policy import PolicyEnv
from ducklm.tools.sandbox.runner import proxied
from ducklm.turn.tool_step.intent import card_warning
from ducklm.turn.tool_step.plan import DecidedCall, PlannedCall, decide_call, plan_calls
from ducklm.turn.tool_step.questions import Asking, PasswordFor, ask_passwords, ask_person
from ducklm.turn.tool_step.repeats import TurnCalls
from ducklm.turn.tool_step.run import repeat
from ducklm.turn.tool_step.server_asks import run_call
from ducklm.turn.tool_step.taint import first_taint
from ducklm.undo.step import StepCheckpoint

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

INVALID_CALL = "the call to {name!r} could not be read: {error}"


async def run_tools(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Run the last action's tool calls; every call gets exactly one ToolMessage."""
    ctx = runtime.context
    last = state.messages[-1]
    assert isinstance(last, AIMessage)  # route_after_action sends only tool-calling replies
    env = PolicyEnv(
        workspace=await asyncio.to_thread(Path(state.workspace).resolve),
        protected=ctx.protected,
        commands=ctx.commands,
        sandboxed=ctx.protection != "none",
        proxied=proxied(ctx.protection),
    )
    proposals = state.code_proposals
    # A resumed run in a new process finds its MCP servers not started yet.
    servers = {ctx.mcp.server_of(call["name"]) for call in last.tool_calls}
    await ctx.mcp.ensure(s for s in servers if s is not None)
    turn = TurnCalls(state.messages, lambda name: ctx.tools.get(name) or ctx.mcp.tool(name))
    # Phase 1: questions only. Nothing above the last interrupt may have a side effect.
    planned = await plan_calls(last.tool_calls, ctx, env, proposals, taint=state.taint, turn=turn)
    decisions = ask_person([_asking(p, state.task) for p in planned if p.needs_person])
    decided = [await decide_call(p, decisions.get(p.call["id"] or ""), ctx, env) for p in planned]
    passwords = ask_passwords([_password_for(d) for d in decided if d.needs_password], ctx.vault)
    # Phase 2: every answer is in; run each call once, in the model's order.
    messages = [_invalid(bad) for bad in last.invalid_tool_calls]
    checkpoint = StepCheckpoint(ctx.undo, runtime, env.workspace, state.step)
    ran: list[tuple[DecidedCall, ToolMessage]] = []
    done: dict[str, ToolMessage] = {}
    for item in decided:
        call_id = item.planned.call["id"] or ""
        if (of := item.planned.repeat_of) is not None:
            # The earlier call is of an earlier step, or earlier in this one (run above).
            earlier = turn.result(of)
            messages.append(repeat(item, done[of] if earlier is None else earlier, runtime))
            continue
        password = passwords.pop(call_id, None)
        message = await run_call(item, password, runtime, env, proposals, checkpoint=checkpoint)
        ran.append((item, message))
        messages.append(message)
        done[call_id] = message
    update: dict[str, Any] = {"messages": messages}
    if state.taint is None and (taint := first_taint(ran, ctx.settings)) is not None:
        emit(runtime, "conversation_untrusted", **taint.event_fields())
        update["taint"] = taint
    return update


def _asking(planned: PlannedCall, request: str) -> Asking:
    # A call that destroys or replaces what the request did not ask to says so first.
    call = planned.call
    mismatch = card_warning(request, call["name"], call["args"], planned.verdict)
    return Asking(planned.call, planned.verdict, mismatch)


def _password_for(item: DecidedCall) -> PasswordFor:
    # The person is shown the command that will run: after an edit, the edited one.
    return PasswordFor(item.planned.call["id"] or "", str(item.args.get("command", "")))


def _invalid(bad: Any) -> ToolMessage:
    return ToolMessage(
        content=INVALID_CALL.format(name=bad.get("name"), error=bad.get("error")),
        tool_call_id=bad.get("id") or "",
        name=bad.get("name") or "",
        status="error",
    )
