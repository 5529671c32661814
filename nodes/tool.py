"""tool: run the tool calls of the last action, asking a person first where policy says so.

Order matters because LangGraph re-runs a node from its top when a paused run resumes:
everything before an `interrupt()` (planning, policy, rule and intent look-ups) is free
of side effects, and nothing runs until every answer is in. A shell command records an
intent before it starts, so a run resumed after a crash reports "outcome unknown"
instead of starting it again.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.messages.tool import ToolCall
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from pydantic import ValidationError

from ducklm.config_files import validation_details
from ducklm.context import DuckContext
from ducklm.events import emit
from ducklm.graph.state import DuckState
from ducklm.nodes.tool_questions import Asking, ask_password, ask_person
from ducklm.tools.coder_tools import CODER_TOOL_NAMES
from ducklm.tools.errors import ToolError
from ducklm.tools.hitl import Decision
from ducklm.tools.policy import PolicyEnv, Verdict, assess
from ducklm.tools.shell import ShellEnv

UNKNOWN_TOOL = "unknown tool {name!r}; the tools are: {names}"
INVALID_CALL = "the call to {name!r} could not be read: {error}"
BAD_ARGS = "bad arguments for {name}: {problems}"
REJECTED = "the user rejected this call"
BLOCKED = "blocked by policy: {reason}"
NO_PASSWORD = "the user did not give the sudo password; the command did not run"
OUTCOME_UNKNOWN = (
    "interrupted, outcome unknown: this command had started when DuckLM stopped, and it "
    "was not run again. Check its effects before running it again."
)
ALREADY_RAN = (
    "this command already ran before DuckLM stopped (exit code {code}); its output was "
    "not kept, and it was not run again"
)
NOTHING_TO_WRITE = Verdict("allow", "the coder made no change that could be written")
CUT_MARK = "\n[... {n} chars cut; the full output is in the audit log ...]\n"


@dataclass(frozen=True)
class PlannedCall:
    """One tool call with everything decided before anything runs."""

    call: ToolCall
    tool: BaseTool | None
    verdict: Verdict
    problem: str | None = None
    approved_by: str | None = None
    """An allow-forever rule that answered the question instead of a person."""

    @property
    def needs_person(self) -> bool:
        """Whether a person must decide before this call runs."""
        return self.verdict.action == "ask" and self.approved_by is None


@dataclass
class Outcome:
    """How one call ended, for its ToolMessage and its audit event."""

    status: str
    output: str
    facts: dict[str, Any]


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
    )
    proposals = state.code_proposals
    planned = [await _plan(call, ctx, env, proposals) for call in last.tool_calls]
    decisions = ask_person([Asking(p.call, p.verdict) for p in planned if p.needs_person])
    messages = [_invalid(bad) for bad in last.invalid_tool_calls]
    for item in planned:
        decision = decisions.get(item.call["id"] or "")
        messages.append(await _execute(item, decision, runtime, env, proposals))
    return {"messages": messages}


async def _plan(
    call: ToolCall, ctx: DuckContext, env: PolicyEnv, proposals: dict[str, dict[str, Any]]
) -> PlannedCall:
    tool = ctx.tools.get(call["name"])
    if tool is None:
        problem = UNKNOWN_TOOL.format(name=call["name"], names=", ".join(ctx.tools.names))
        return PlannedCall(call, None, Verdict("deny", "unknown tool"), problem)
    verdict = await asyncio.to_thread(assess, call["name"], call["args"], env)
    if call["name"] in CODER_TOOL_NAMES and verdict.action == "ask":
        proposal = proposals.get(call["id"] or "") or {}
        if not _writable(proposal):  # the tool will refuse it: nothing to approve
            return PlannedCall(call, tool, NOTHING_TO_WRITE)
        # The person decides on the change itself, not on a description of it.
        verdict = dataclasses.replace(verdict, reason=f"{verdict.reason}:\n{proposal['diff']}")
    if verdict.action == "ask" and verdict.rule_key:
        rule = await ctx.approvals.find(call["name"], verdict.rule_key)
        if rule is not None:
            return PlannedCall(call, tool, verdict, approved_by=f"rule {rule.id}")
    return PlannedCall(call, tool, verdict)


def _writable(proposal: dict[str, Any]) -> bool:
    return bool(proposal.get("diff")) and not proposal.get("error") and proposal["syntax_ok"]


async def _execute(
    item: PlannedCall,
    decision: Decision | None,
    runtime: Runtime[DuckContext],
    env: PolicyEnv,
    proposals: dict[str, dict[str, Any]],
) -> ToolMessage:
    call, args = item.call, item.call["args"]
    if decision is not None and decision["type"] == "edit":
        args = decision["edited_action"]["args"]
    emit(runtime, "tool_call_started", call_id=call["id"], tool=call["name"], args=args)
    if call["name"] in CODER_TOOL_NAMES:
        args = {**args, "proposal": proposals.get(call["id"] or "")}
    outcome = await _outcome(item, decision, args, runtime, env)
    limit = runtime.context.settings.max_tool_output_chars
    facts = dict(outcome.facts)
    # Cut twice at most: by the sandbox's byte budget, then for the state's char budget.
    truncated = bool(facts.pop("truncated", False)) or len(outcome.output) > limit
    emit(
        runtime,
        "tool_call_finished",
        call_id=call["id"],
        tool=call["name"],
        status=outcome.status,
        decision=decision["type"] if decision else None,
        approved_by=_approver(item, decision),
        verdict=item.verdict.action,
        command_class=item.verdict.command_class,
        output=outcome.output,
        truncated=truncated,
        **facts,
    )
    return ToolMessage(
        content=clip(outcome.output, limit),
        tool_call_id=call["id"] or "",
        name=call["name"],
        status="error" if outcome.status != "success" else "success",
        artifact=outcome.facts or None,
    )


async def _outcome(
    item: PlannedCall,
    decision: Decision | None,
    args: dict[str, Any],
    runtime: Runtime[DuckContext],
    env: PolicyEnv,
) -> Outcome:
    refusal = _refusal(item, decision)
    if refusal is not None:
        return Outcome("error", refusal, {})
    assert item.tool is not None  # a call without a tool always has a refusal
    if decision is not None and decision["type"] == "allow_forever" and item.verdict.rule_key:
        await runtime.context.approvals.add(
            item.call["name"], item.verdict.rule_key, item.verdict.reason
        )
    if item.call["name"] == "shell_exec":
        return await _run_shell(item, args, runtime, env)
    return await _invoke(item.tool, item.call, {**args, "workspace": env.workspace})


async def _run_shell(
    item: PlannedCall, args: dict[str, Any], runtime: Runtime[DuckContext], env: PolicyEnv
) -> Outcome:
    ctx, call_id = runtime.context, item.call["id"] or ""
    earlier = await ctx.intents.get(call_id)
    if earlier is not None:
        if earlier.finished_at is None:
            return Outcome("unknown", OUTCOME_UNKNOWN, {"outcome": "unknown"})
        ran = ALREADY_RAN.format(code=earlier.exit_code)
        return Outcome("unknown", ran, {"outcome": "ran", "exit_code": earlier.exit_code})
    password = None
    if item.verdict.sudo:
        password = ask_password(item.call, ctx.vault)
        if password is None:
            return Outcome("error", NO_PASSWORD, {})
    shell = ShellEnv(
        workspace=env.workspace,
        protection=ctx.protection,
        readonly=(env.workspace / ".git", *ctx.protected),
        network=item.verdict.network,
        sudo_password=password,
    )
    thread_id = runtime.execution_info.thread_id if runtime.execution_info else None
    await ctx.intents.begin(call_id, thread_id or "", str(args.get("command", "")))
    outcome = await _invoke(item.tool, item.call, {**args, "shell": shell})  # type: ignore[arg-type]
    del password, shell  # forget the secret as soon as the command has it
    await ctx.intents.finish(call_id, outcome.facts.get("exit_code"))
    return outcome


def _refusal(item: PlannedCall, decision: Decision | None) -> str | None:
    if item.problem is not None:
        return item.problem
    if item.verdict.action == "deny":
        return BLOCKED.format(reason=item.verdict.reason)
    if decision is not None and decision["type"] == "reject":
        message = decision.get("message")
        return f"{REJECTED}: {message}" if message else REJECTED
    return None


def _approver(item: PlannedCall, decision: Decision | None) -> str:
    if decision is not None:
        return "person"
    return item.approved_by or "policy"


async def _invoke(tool: BaseTool, call: ToolCall, args: dict[str, Any]) -> Outcome:
    # Invoked as a tool call, a tool answers with a ToolMessage that carries its artifact.
    as_call = {"type": "tool_call", "name": call["name"], "id": call["id"], "args": args}
    try:
        message = await tool.ainvoke(as_call)
    except ToolError as exc:
        return Outcome("error", str(exc), {})
    except ValidationError as exc:
        problems = validation_details(exc)
        return Outcome("error", BAD_ARGS.format(name=tool.name, problems=problems), {})
    facts = message.artifact if isinstance(message.artifact, dict) else {}
    return Outcome("success", message.text, dict(facts))


def _invalid(bad: Any) -> ToolMessage:
    return ToolMessage(
        content=INVALID_CALL.format(name=bad.get("name"), error=bad.get("error")),
        tool_call_id=bad.get("id") or "",
        name=bad.get("name") or "",
        status="error",
    )


def clip(text: str, limit: int) -> str:
    """`text` cut to about `limit` chars, keeping its head and tail and marking the cut."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return text[:head] + CUT_MARK.format(n=len(text) - limit) + text[-tail:]
