"""Each call of a step run as a LangGraph task, so that an MCP server's question can pause it.

A server asks its questions (an elicitation form; sampling, when it is untrusted) in
the middle of `tools/call`, after the step's questions were answered and maybe after
other calls of the step ran. A person is asked only by `interrupt()`, which ends the
node; the node then runs again from its top. So:

- every call runs as a LangGraph task (`langgraph.func.task`, used inside a graph node
  as LangGraph's durable execution prescribes): its result is written to the checkpoint
  when it ends, and the node's re-run gets it back instead of running the call again;
- an attempt that reaches a question no answer in hand fits ends its task with the
  question; the node asks it (`questions.ask_server`, the same interrupt as approvals)
  and makes a new attempt, as a new task, with the answers in hand;
- at 2025-11-25 the server asks inside the call and waits: the call is not the node's
  but runs on, held by its server (`ducklm/mcp/held.py`) for `asks.HOLD_S`, and the new
  attempt hands it the answer and waits for its result (the server sees one call);
- at 2026-07-28 (an `input_required` round: nothing ran yet), and for a held call that
  expired or was lost in a restart, the new attempt makes the call again, the answers
  handed to the server's same questions in order. The answers are in the checkpoint, so
  this holds across a restart; what the tool did before asking then runs again, and the
  card says so (`asks.HELD`, `asks.AGAIN`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage
from langgraph.func import task
from langgraph.runtime import Runtime

from ducklm.kit.events import emit
from ducklm.mcp.asks import MAX_QUESTIONS, TOO_MANY, Asked
from ducklm.tools.hitl import ServerQuestion
from ducklm.tools.mcp_info import event_fields
from ducklm.tools.policy import PolicyEnv
from ducklm.turn.coding.proposals import Proposal
from ducklm.turn.tool_step.plan import DecidedCall
from ducklm.turn.tool_step.run import execute
from ducklm.turn.tool_step.server_question import ask_server
from ducklm.undo.step import StepCheckpoint

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

Attempt = ToolMessage | ServerQuestion


async def tool_call(run: Callable[[], Awaitable[Attempt]]) -> Attempt:
    """One attempt at a call; as `_attempt`, its result is kept in the checkpoint."""
    return await run()


_attempt = task(tool_call)


async def run_call(
    item: DecidedCall,
    password: str | None,
    runtime: Runtime[DuckContext],
    env: PolicyEnv,
    proposals: Mapping[str, Proposal],
    *,
    checkpoint: StepCheckpoint,
) -> ToolMessage:
    """`execute` `item` as tasks, asking the person each question its server asks."""
    answered: list[Asked] = []
    while True:
        result: Attempt = await _attempt(
            lambda done=tuple(answered): execute(
                item, password, runtime, env, proposals, checkpoint=checkpoint, answered=done
            )
        )
        if isinstance(result, ToolMessage):
            return result
        if len(answered) >= MAX_QUESTIONS:
            return _gave_up(item, runtime)
        answered.append(Asked(result, ask_server(result)))


def _gave_up(item: DecidedCall, runtime: Runtime[DuckContext]) -> ToolMessage:
    call = item.planned.call
    words = TOO_MANY.format(n=MAX_QUESTIONS)
    fields: dict[str, Any] = event_fields(item.planned.tool)
    emit(
        runtime,
        "tool_call_finished",
        call_id=call["id"],
        tool=call["name"],
        status="error",
        decision=item.decision.type if item.decision else None,
        approved_by="person" if item.decision else item.planned.approved_by or "policy",
        verdict=item.planned.verdict.action,
        output=words,
        truncated=False,
        **fields,
    )
    return ToolMessage(words, tool_call_id=call["id"] or "", name=call["name"], status="error")
