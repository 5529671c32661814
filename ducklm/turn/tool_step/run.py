"""Run one decided tool call: its events, its side effects, and its ToolMessage.

Only the tool node's last pass gets here, after every question of the step has been
answered, so nothing in this module may ask a person anything. An MCP server may ask
during its call (`ducklm/mcp/asks.py`): the attempt then ends with the server's question
instead of a ToolMessage, and `server_asks.py` asks it and makes the call again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage
from langchain_core.messages.tool import ToolCall
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from pydantic import ValidationError

from ducklm.config.yaml_files import validation_details
from ducklm.kit.events import emit
from ducklm.mcp.asks import Asked, CallAsks, NeedsPerson, call_asks
from ducklm.stores.intents import Intent
from ducklm.tools.coder_tools import CODER_TOOL_NAMES
from ducklm.tools.errors import ToolError
from ducklm.tools.file_threads import deadline_args
from ducklm.tools.hitl import AllowForever, Reject, ServerQuestion
from ducklm.tools.mcp_info import McpToolInfo, event_fields, mcp_info, progress_listener
from ducklm.tools.policy import PolicyEnv, may_change_workspace
from ducklm.tools.secret_scan.names import secret_name_args
from ducklm.tools.shell import ShellEnv
from ducklm.turn.coding.proposals import Proposal
from ducklm.turn.tool_step.plan import DecidedCall
from ducklm.turn.tool_step.progress import progress_events
from ducklm.turn.tool_step.repeats import DECLINED, repeat_message
from ducklm.turn.tool_step.sampling import role_sampler, sampled_event
from ducklm.turn.tool_step.shown import shown_facts, shown_output
from ducklm.undo.step import StepCheckpoint

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

BAD_ARGS = "bad arguments for {name}: {problems}"
NO_PASSWORD = "the user did not give the sudo password; the command did not run"
NO_PASSWORD_REASON = "they did not give the sudo password"
OUTCOME_UNKNOWN = (
    "interrupted, outcome unknown: this command had started when DuckLM stopped, and it "
    "was not run again. Check its effects before running it again."
)
ALREADY_RAN = (
    "this command already ran before DuckLM stopped (exit code {code}); its output was "
    "not kept, and it was not run again"
)
CUT_MARK = "\n[... {n} chars cut; the full output is in the audit log ...]\n"
OVERWRITING_TOOLS = frozenset({"file_write", "file_move", "file_copy"})
"""The tools with an `overwrite` argument, set when the policy judged the overwrite."""


@dataclass
class Outcome:
    """How one call ended, for its ToolMessage and its audit event."""

    status: str
    output: str
    facts: dict[str, Any]
    question: ServerQuestion | None = None
    """The MCP server's question the call stopped at (`status` "asking")."""


async def execute(
    item: DecidedCall,
    password: str | None,
    runtime: Runtime[DuckContext],
    env: PolicyEnv,
    proposals: Mapping[str, Proposal],
    *,
    checkpoint: StepCheckpoint | None = None,
    answered: Sequence[Asked] = (),
) -> ToolMessage | ServerQuestion:
    """Run `item` (with its sudo `password`, if it needs one) and report it once.

    A call that may change the workspace gets the step's `checkpoint` first, and its
    change recorded after (`ducklm.undo.step`). An MCP call gets the person's `answered`
    questions of its earlier attempts; one that stops at a new question returns it (and
    reports nothing finished: the next attempt goes on with the same card).
    """
    call, args = item.planned.call, item.args
    changes = checkpoint is not None and _may_change(item, password)
    mcp = event_fields(item.planned.tool)  # server and tool, for MCP calls
    if not answered:  # a later attempt continues the card its first one started
        emit(runtime, "tool_call_started", call_id=call["id"], tool=call["name"], args=args, **mcp)
    if call["name"] in CODER_TOOL_NAMES:
        # The tool takes plain JSON: its injected argument is not part of the state.
        proposal = proposals.get(call["id"] or "")
        args = {**args, "proposal": None if proposal is None else proposal.model_dump()}
    if changes and checkpoint is not None:
        await checkpoint.before_call(call["id"] or "", item.args)
    try:
        outcome = await _outcome(item, password, args, runtime, env, answered=answered)
    except asyncio.CancelledError:
        if changes and checkpoint is not None:  # Stop: what the call did so far is kept
            await asyncio.shield(checkpoint.after_call(call["id"] or "", call["name"], item.args))
        raise
    del password  # forget the secret as soon as the command has it
    if outcome.question is not None:
        return outcome.question
    output = await shown_output(item, outcome.output)  # every result: its secrets hidden
    shown = await shown_facts(item, outcome.facts)
    limit = runtime.context.settings.max_tool_output_chars
    facts = dict(shown)
    if changes and checkpoint is not None:
        facts.update(await checkpoint.after_call(call["id"] or "", call["name"], item.args))
    # Cut twice at most: by the sandbox's byte budget, then for the state's char budget.
    truncated = bool(facts.pop("truncated", False)) or len(output) > limit
    emit(
        runtime,
        "tool_call_finished",
        call_id=call["id"],
        tool=call["name"],
        status=outcome.status,
        decision=item.decision.type if item.decision else None,
        approved_by=_approver(item),
        verdict=item.planned.verdict.action,
        command_class=item.verdict.command_class,
        output=output,
        truncated=truncated,
        **mcp,
        **facts,
    )
    return ToolMessage(
        content=clip(output, limit),
        tool_call_id=call["id"] or "",
        name=call["name"],
        status="error" if outcome.status != "success" else "success",
        artifact=shown or None,
    )


async def _outcome(
    item: DecidedCall,
    password: str | None,
    args: dict[str, Any],
    runtime: Runtime[DuckContext],
    env: PolicyEnv,
    *,
    answered: Sequence[Asked] = (),
) -> Outcome:
    if (blocked := _blocked(item, password)) is not None:
        return blocked
    tool, verdict = item.planned.tool, item.planned.verdict
    assert tool is not None  # a call without a tool always has a refusal
    decision = item.decision
    if isinstance(decision, AllowForever) and verdict.rule_key:
        await runtime.context.approvals.add(
            item.planned.call["name"], verdict.rule_key, verdict.reason
        )
    if item.planned.call["name"] == "shell_exec":
        return await _run_shell(item, password, args, runtime, env)
    if item.verdict.overwrites and item.planned.call["name"] in OVERWRITING_TOOLS:
        # The policy judged the overwrite (the person approved it, or the rule allows it).
        args = {**args, "overwrite": True}
    if (info := mcp_info(tool)) is not None:  # the server's own arguments, nothing injected
        call_id = item.planned.call["id"] or ""
        token = call_asks.set(_call_asks(info, call_id, runtime, answered))
        heard = progress_listener.set(progress_events(runtime, call_id, info))
        try:
            return await _invoke(tool, item.planned.call, args)
        finally:
            progress_listener.reset(heard)
            call_asks.reset(token)
    ctx = runtime.context
    injected = {
        "workspace": env.workspace,
        **deadline_args(tool.name, ctx.settings),
        **secret_name_args(tool.name, ctx.commands.secret_names),
    }
    return await _invoke(tool, item.planned.call, {**args, **injected})


def _call_asks(
    info: McpToolInfo, call_id: str, runtime: Runtime[DuckContext], answered: Sequence[Asked]
) -> CallAsks:
    """Where the server's questions during this call go (`ducklm/mcp/asks.py`)."""
    return CallAsks(
        call_id=call_id,
        server=info.server,
        tool=info.tool,
        trusted=info.trusted,
        answered=answered,
        sampler=role_sampler(runtime),
        on_sampled=sampled_event(runtime, call_id, info.server, info.tool),
    )


def repeat(item: DecidedCall, earlier: ToolMessage, runtime: Runtime[DuckContext]) -> ToolMessage:
    """The answer to `item`, a repeat of the call `earlier` answered: nothing runs or is asked.

    Only `tool_call_finished` is emitted (nothing started), with `repeat_of`.
    """
    call = item.planned.call
    message = repeat_message(call, earlier)
    emit(
        runtime,
        "tool_call_finished",
        call_id=call["id"],
        tool=call["name"],
        args=call["args"],
        status=message.status,
        decision=None,
        approved_by=None,
        verdict=item.planned.verdict.action,
        output=message.text,
        truncated=False,
        repeat_of=earlier.tool_call_id,
    )
    return message


def _blocked(item: DecidedCall, password: str | None) -> Outcome | None:
    """The outcome of a call that will not run (refused, ran before, no password), or `None`.

    One the person declined says so (`declined`, with their reason), so that a repeat of
    it in this turn is answered with that reason instead of asking again (`repeats`).
    """
    if item.refusal is not None:
        decision = item.decision
        facts = {DECLINED: decision.message or ""} if isinstance(decision, Reject) else {}
        return Outcome("error", item.refusal, facts)
    if item.earlier is not None:
        return _earlier_outcome(item.earlier)
    if item.needs_password and password is None:
        return Outcome("error", NO_PASSWORD, {DECLINED: NO_PASSWORD_REASON})
    return None


def _may_change(item: DecidedCall, password: str | None) -> bool:
    """Whether `item` will run and may change the workspace (so it needs a checkpoint)."""
    runs = _blocked(item, password) is None
    return runs and may_change_workspace(item.planned.call["name"], item.verdict)


def _earlier_outcome(earlier: Intent) -> Outcome:
    if earlier.finished_at is None:
        return Outcome("unknown", OUTCOME_UNKNOWN, {"outcome": "unknown"})
    ran = ALREADY_RAN.format(code=earlier.exit_code)
    return Outcome("unknown", ran, {"outcome": "ran", "exit_code": earlier.exit_code})


async def _run_shell(
    item: DecidedCall,
    password: str | None,
    args: dict[str, Any],
    runtime: Runtime[DuckContext],
    env: PolicyEnv,
) -> Outcome:
    ctx, call_id = runtime.context, item.planned.call["id"] or ""
    shell = ShellEnv(
        workspace=env.workspace,
        protection=ctx.protection,
        readonly=ctx.protected,  # every .git the view finds itself
        hidden=ctx.hidden,
        secret_names=ctx.commands.secret_names,
        # Only what the person was asked about: a read the policy saw and they approved.
        reveal_secrets=item.verdict.secrets and item.decision is not None,
        # A git write runs only asked (or as the person's permissions.yaml allows).
        control_writable=item.verdict.writes_git,
        network=item.verdict.network,
        hosts=item.verdict.hosts,
        sudo_password=password,
    )
    thread_id = runtime.execution_info.thread_id if runtime.execution_info else None
    # Written before the command starts: a run resumed after a crash finds it and
    # reports "outcome unknown" instead of starting the command a second time. The
    # insert is also the one claim on the call: a worker whose loop stalled past its
    # lease while another took its run over reaches this call after the plan read no
    # intent; whichever inserts second starts nothing.
    if not await ctx.intents.begin(call_id, thread_id or "", str(args.get("command", ""))):
        del password, shell
        earlier = await ctx.intents.get(call_id)
        assert earlier is not None  # it was just refused for being there
        return _earlier_outcome(earlier)
    assert item.planned.tool is not None  # checked by `_outcome`
    outcome = await _invoke(item.planned.tool, item.planned.call, {**args, "shell": shell})
    del password, shell
    await ctx.intents.finish(call_id, outcome.facts.get("exit_code"))
    return outcome


def _approver(item: DecidedCall) -> str:
    if item.decision is not None:
        return "person"
    return item.planned.approved_by or "policy"


async def _invoke(tool: BaseTool, call: ToolCall, args: dict[str, Any]) -> Outcome:
    # Invoked as a tool call, a tool answers with a ToolMessage that carries its artifact.
    as_call = {"type": "tool_call", "name": call["name"], "id": call["id"], "args": args}
    try:
        message = await tool.ainvoke(as_call)
    except ToolError as exc:
        return Outcome("error", str(exc), {})
    except NeedsPerson as exc:
        return Outcome("asking", "", {}, question=exc.question)
    except ValidationError as exc:
        problems = validation_details(exc)
        return Outcome("error", BAD_ARGS.format(name=tool.name, problems=problems), {})
    facts = message.artifact if isinstance(message.artifact, dict) else {}
    return Outcome("success", message.text, dict(facts))


def clip(text: str, limit: int) -> str:
    """`text` cut to about `limit` chars, keeping its head and tail and marking the cut."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return text[:head] + CUT_MARK.format(n=len(text) - limit) + text[-tail:]
