"""Plan a tool step before anything runs: what each call is, and what must be asked.

Everything here only reads (the policy, allow-forever rules, command intents, the file
an overwrite replaces), because the tool node re-runs it from the top every time a
paused step resumes. `plan_calls` sets apart the calls that repeat an earlier one of the
turn (`repeats`); `plan_call` decides whether a person must approve a call; `decide_call`
folds the person's decision in and says whether the call, as it will run, needs the sudo
password.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.messages.tool import ToolCall
from langchain_core.tools import BaseTool

from ducklm.stores.intents import Intent
from ducklm.tools.coder_tools import CODER_TOOL_NAMES
from ducklm.tools.hitl import Decision, Edit, Reject
from ducklm.tools.mcp_info import mcp_info
from ducklm.tools.policy import PolicyEnv, Verdict, assess
from ducklm.tools.trust import Taint, assess_mcp, under_taint
from ducklm.turn.coding.proposals import CodeProposal, Proposal
from ducklm.turn.tool_step.repeats import TurnCalls
from ducklm.turn.tool_step.write_diff import overwrite_diff

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

UNKNOWN_TOOL = "unknown tool {name!r}; the tools are: {names}"
REJECTED = "the user rejected this call"
BLOCKED = "blocked by policy: {reason}"
NOTHING_TO_WRITE = Verdict("allow", "the coder made no change that could be written")
REPEATED = Verdict("allow", "repeats an earlier call of this turn: answered from it")
UNCHANGED = "{path} already holds this text: nothing changes"


@dataclass(frozen=True)
class PlannedCall:
    """One tool call with everything decided before a person is asked."""

    call: ToolCall
    tool: BaseTool | None
    verdict: Verdict
    problem: str | None = None
    approved_by: str | None = None
    """An allow-forever rule that answered the question instead of a person."""
    repeat_of: str | None = None
    """The id of the earlier call this one repeats: it is answered from that one's outcome."""

    @property
    def needs_person(self) -> bool:
        """Whether a person must decide before this call runs."""
        return self.verdict.action == "ask" and self.approved_by is None


@dataclass(frozen=True)
class DecidedCall:
    """One call after the person's decision: how it will run, or why it will not."""

    planned: PlannedCall
    decision: Decision | None
    args: dict[str, Any]
    """The arguments that run: the model's, or the person's edit."""
    verdict: Verdict
    """The policy's verdict on `args` (for an edit, on the edited call)."""
    refusal: str | None = None
    earlier: Intent | None = None
    """This shell call had started before the process stopped: it never runs again."""

    @property
    def needs_password(self) -> bool:
        """Whether this call will run through sudo, so the person must give the password."""
        runs = self.refusal is None and self.earlier is None
        return runs and self.planned.call["name"] == "shell_exec" and self.verdict.sudo


async def plan_calls(
    calls: Sequence[ToolCall],
    ctx: DuckContext,
    env: PolicyEnv,
    proposals: Mapping[str, Proposal],
    *,
    taint: Taint | None,
    turn: TurnCalls,
) -> list[PlannedCall]:
    """`plan_call` for each of the step's calls, in order; a repeat asks nothing."""
    planned = []
    for call in calls:
        earlier = turn.earlier(call)
        if earlier is not None:
            tool = ctx.tools.get(call["name"]) or ctx.mcp.tool(call["name"])
            planned.append(PlannedCall(call, tool, REPEATED, repeat_of=earlier))
        else:
            planned.append(await plan_call(call, ctx, env, proposals, taint))
    return planned


async def plan_call(
    call: ToolCall,
    ctx: DuckContext,
    env: PolicyEnv,
    proposals: Mapping[str, Proposal],
    taint: Taint | None = None,
) -> PlannedCall:
    """The policy's verdict on `call`, answered by an allow-forever rule where one fits.

    In a conversation that `taint` made untrusted, whatever is not read-only asks the
    person, and no rule answers for them.
    """
    tool = ctx.tools.get(call["name"]) or ctx.mcp.tool(call["name"])
    if tool is None:
        names = ctx.tools.names + [t.name for t in ctx.mcp.tools()]
        problem = UNKNOWN_TOOL.format(name=call["name"], names=", ".join(names))
        return PlannedCall(call, None, Verdict("deny", "unknown tool"), problem)
    verdict = await _assess(tool, call["name"], call["args"], env)
    if call["name"] in CODER_TOOL_NAMES and verdict.action == "ask":
        proposal = proposals.get(call["id"] or "")
        if not isinstance(proposal, CodeProposal) or not proposal.writable:
            return PlannedCall(call, tool, NOTHING_TO_WRITE)  # the tool will refuse it
        # The person decides on the change itself, not on a description of it.
        verdict = dataclasses.replace(verdict, reason=f"{verdict.reason}:\n{proposal.diff}")
    elif call["name"] == "file_write" and verdict.action == "ask" and verdict.overwrites:
        verdict = await _with_diff(verdict, call["args"], ctx, env)
    tainted = under_taint(call["name"], mcp_info(tool), verdict, taint)
    if tainted is not verdict:
        return PlannedCall(call, tool, tainted)
    if verdict.action == "ask" and verdict.rule_key:
        rule = await ctx.approvals.find(call["name"], verdict.rule_key)
        if rule is not None:
            return PlannedCall(call, tool, verdict, approved_by=f"rule {rule.id}")
    return PlannedCall(call, tool, verdict)


async def decide_call(
    item: PlannedCall, decision: Decision | None, ctx: DuckContext, env: PolicyEnv
) -> DecidedCall:
    """`item` with the person's `decision` folded in; reads the policy and intents only."""
    args, verdict = item.call["args"], item.verdict
    if isinstance(decision, Edit):
        args = decision.edited_action.args
        # The edit, not the original, decides sudo and network: `ls` edited into
        # `sudo ls` needs the password, and the reverse no longer does.
        verdict = await _assess(item.tool, item.call["name"], args, env)
    refusal = _refusal(item, decision, verdict)
    if refusal is not None or item.call["name"] != "shell_exec":
        return DecidedCall(item, decision, args, verdict, refusal)
    earlier = await ctx.intents.get(item.call["id"] or "")
    return DecidedCall(item, decision, args, verdict, earlier=earlier)


async def _with_diff(
    verdict: Verdict, args: dict[str, Any], ctx: DuckContext, env: PolicyEnv
) -> Verdict:
    """An overwrite's question with the diff it makes; none if it changes nothing."""
    path = str(args.get("path"))
    timeout_s = ctx.settings.file_tool_timeout_s
    diff = await overwrite_diff(env.workspace, path, args.get("content"), timeout_s)
    if not diff:
        return dataclasses.replace(verdict, action="allow", reason=UNCHANGED.format(path=path))
    return dataclasses.replace(verdict, reason=f"{verdict.reason}:\n{diff}")


async def _assess(
    tool: BaseTool | None, name: str, args: dict[str, Any], env: PolicyEnv
) -> Verdict:
    info = mcp_info(tool)
    if info is not None:
        return assess_mcp(info, args)
    return await asyncio.to_thread(assess, name, args, env)


def _refusal(item: PlannedCall, decision: Decision | None, verdict: Verdict) -> str | None:
    if item.problem is not None:
        return item.problem
    if item.verdict.action == "deny":
        return BLOCKED.format(reason=item.verdict.reason)
    if isinstance(decision, Reject):
        return f"{REJECTED}: {decision.message}" if decision.message else REJECTED
    if verdict.action == "deny":  # an edit cannot turn a call into one that never runs
        return BLOCKED.format(reason=verdict.reason)
    return None
