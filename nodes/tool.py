"""tool: run the tool calls of the last action, asking a person first where policy says so.

Order matters because LangGraph re-runs a node from its top when a paused run resumes:
everything before `interrupt()` (planning, policy, rule look-ups) is free of side
effects, and nothing runs until every decision is in.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.messages.tool import ToolCall
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from pydantic import ValidationError

from ducklm.context import DuckContext
from ducklm.events import emit
from ducklm.graph.state import DuckState
from ducklm.tools.errors import ToolError
from ducklm.tools.hitl import (
    DECISION_TYPES,
    ActionRequest,
    Decision,
    DecisionError,
    DecisionType,
    build_request,
    parse_decisions,
)
from ducklm.tools.policy import Verdict, assess

UNKNOWN_TOOL = "unknown tool {name!r}; the tools are: {names}"
INVALID_CALL = "the call to {name!r} could not be read: {error}"
BAD_ARGS = "bad arguments for {name}: {problems}"
REJECTED = "the user rejected this call"
BLOCKED = "blocked by policy: {reason}"
CUT_MARK = "\n[... {n} chars cut; the full output is in the audit log ...]\n"


@dataclass(frozen=True)
class PlannedCall:
    """One tool call with everything decided before anything runs."""

    call: ToolCall
    tool: BaseTool | None
    verdict: Verdict
    problem: str | None = None


async def run_tools(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Run the last action's tool calls; every call gets exactly one ToolMessage."""
    ctx = runtime.context
    last = state.messages[-1]
    assert isinstance(last, AIMessage)  # route_after_action sends only tool-calling replies
    workspace = Path(state.workspace)
    planned = [await _plan(call, ctx, workspace) for call in last.tool_calls]
    decisions = _ask_person([p for p in planned if p.verdict.action == "ask"])
    messages = [
        ToolMessage(
            content=INVALID_CALL.format(name=bad.get("name"), error=bad.get("error")),
            tool_call_id=bad.get("id") or "",
            name=bad.get("name") or "",
            status="error",
        )
        for bad in last.invalid_tool_calls
    ]
    for item in planned:
        decision = decisions.get(item.call["id"] or "")
        messages.append(await _execute(item, decision, runtime, workspace))
    return {"messages": messages}


async def _plan(call: ToolCall, ctx: DuckContext, workspace: Path) -> PlannedCall:
    tool = ctx.tools.get(call["name"])
    if tool is None:
        problem = UNKNOWN_TOOL.format(name=call["name"], names=", ".join(ctx.tools.names))
        return PlannedCall(call, None, Verdict("deny", "unknown tool"), problem)
    verdict = await asyncio.to_thread(assess, call["name"], call["args"], workspace, ctx.protected)
    if verdict.action == "ask" and verdict.rule_key:
        rule = await ctx.approvals.find(call["name"], verdict.rule_key)
        if rule is not None:
            verdict = Verdict("allow", f"allowed by rule {rule.id}")
    return PlannedCall(call, tool, verdict)


def _ask_person(asking: list[PlannedCall]) -> dict[str, Decision]:
    """One interrupt for every call that needs a person; the decisions by call id.

    An answer that does not fit the request asks again, with what was wrong, instead of
    failing the run: the question stays open until it gets a usable answer.
    """
    if not asking:
        return {}
    request = build_request([(_action_request(p), _allowed(p.verdict)) for p in asking])
    error: str | None = None
    while True:
        response = interrupt(request if error is None else {**request, "error": error})
        try:
            decisions = parse_decisions(request, response)
        except DecisionError as exc:
            error = str(exc)
            continue
        return {p.call["id"] or "": d for p, d in zip(asking, decisions, strict=True)}


def _action_request(item: PlannedCall) -> ActionRequest:
    return {
        "name": item.call["name"],
        "args": item.call["args"],
        "description": item.verdict.reason,
    }


def _allowed(verdict: Verdict) -> list[DecisionType]:
    if verdict.rule_key:
        return list(DECISION_TYPES)
    return [d for d in DECISION_TYPES if d != "allow_forever"]


async def _execute(
    item: PlannedCall,
    decision: Decision | None,
    runtime: Runtime[DuckContext],
    workspace: Path,
) -> ToolMessage:
    call, args = item.call, item.call["args"]
    refusal = _refusal(item, decision)
    if refusal is None and decision is not None:
        if decision["type"] == "edit":
            args = decision["edited_action"]["args"]
        elif decision["type"] == "allow_forever" and item.verdict.rule_key:
            await runtime.context.approvals.add(
                call["name"], item.verdict.rule_key, item.verdict.reason
            )
    emit(runtime, "tool_call_started", call_id=call["id"], tool=call["name"], args=args)
    if refusal is not None:
        status, output = "error", refusal
    else:
        assert item.tool is not None  # a call without a tool always has a refusal
        status, output = await _invoke(item.tool, args, workspace)
    limit = runtime.context.settings.max_tool_output_chars
    emit(
        runtime,
        "tool_call_finished",
        call_id=call["id"],
        tool=call["name"],
        status=status,
        decision=decision["type"] if decision else None,
        output=output,
        truncated=len(output) > limit,
    )
    return ToolMessage(
        content=clip(output, limit), tool_call_id=call["id"] or "", name=call["name"], status=status
    )


def _refusal(item: PlannedCall, decision: Decision | None) -> str | None:
    if item.problem is not None:
        return item.problem
    if item.verdict.action == "deny":
        return BLOCKED.format(reason=item.verdict.reason)
    if decision is not None and decision["type"] == "reject":
        message = decision.get("message")
        return f"{REJECTED}: {message}" if message else REJECTED
    return None


async def _invoke(tool: BaseTool, args: dict[str, Any], workspace: Path) -> tuple[str, str]:
    try:
        result = await tool.ainvoke({**args, "workspace": workspace})
    except ToolError as exc:
        return "error", str(exc)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        return "error", BAD_ARGS.format(name=tool.name, problems=problems)
    return "success", str(result)


def clip(text: str, limit: int) -> str:
    """`text` cut to about `limit` chars, keeping its head and tail and marking the cut."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return text[:head] + CUT_MARK.format(n=len(text) - limit) + text[-tail:]
