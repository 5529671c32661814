"""step_review: after the action loop finishes a plan step, judge it and move on.

A step's result is what its action loop ended with. The critic role scores it when the
run has the critic on; when the critic is off or fails, the step's own result decides
(documented fallback): it failed if its last tool call failed or nothing came of it. A
failed step is retried once with the critique in its notes; failing again, the plan is
revised once (the thinker plans what is still missing); after that the remaining steps
are skipped and the thinker answers honestly with what was done.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from ducklm.graph.state import DuckState
from ducklm.kit.events import emit
from ducklm.nodes.planner import revise_plan
from ducklm.turn.planning.flow import begin_next_step, skip_pending, step_started
from ducklm.turn.planning.plans import PlanStep, StepResults, StepStatuses
from ducklm.turn.planning.text import clip_result
from ducklm.turn.prompting.structured import ask_validated, system_prompt, with_system

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

NO_RESULT = "(the step produced no result)"
CHECK_REQUEST = """Plan step {id}: {goal}
What the step produced:
{result}
Did the step achieve its goal? Answer with a score from 0 to 1, "ok" and a short reason."""
RETRY_NOTE = "Step {id} is tried again: {reason}"
STOPPED_NOTE = "The plan stopped: step {id} failed twice ({reason}); later steps were skipped."

log = logging.getLogger(__name__)


class StepCheck(BaseModel):
    """The critic's verdict on one plan step."""

    score: float = Field(ge=0.0, le=1.0)
    ok: bool
    reason: str = ""


async def review_step(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Judge the current step; then the next step, a retry, a revision or the answer."""
    plan = state.plan
    assert plan is not None and state.current_step  # routing sends only running steps here
    step = plan.step(state.current_step)
    result, failed_call = step_result(state)
    check, judged_by = await _check(state, runtime, step, result, failed_call)
    statuses: StepStatuses = dict(state.plan_status)
    results: StepResults = dict(state.plan_results)
    finished = {
        "step_id": step.id,
        "score": check.score,
        "reason": check.reason,
        "judged_by": judged_by,
    }
    if check.ok:
        statuses[step.id], results[step.id] = "done", result
        emit(runtime, "plan_step_finished", status="done", result=clip_result(result), **finished)
        return begin_next_step(state, runtime, plan, statuses, results)
    if state.step_attempts < 1:
        emit(
            runtime,
            "plan_step_finished",
            status="failed",
            retry=True,
            result=clip_result(result),
            **finished,
        )
        step_started(runtime, plan, step.id, attempt=2)
        reason = check.reason or "it did not succeed"
        note = {"note": RETRY_NOTE.format(id=step.id, reason=reason)}
        return {
            "step": 0,
            "step_attempts": state.step_attempts + 1,
            "step_feedback": reason,
            "step_started_at": len(state.messages),
            "final": "",
            "observations": [*state.observations, note],
        }
    statuses[step.id], results[step.id] = "failed", result
    emit(
        runtime,
        "plan_step_finished",
        status="failed",
        retry=False,
        result=clip_result(result),
        **finished,
    )
    if state.plan_revisions < 1:
        revised = await revise_plan(
            state, runtime, plan, statuses, results=results, reason=check.reason
        )
        if revised is not None:
            return revised
    update = begin_next_step(state, runtime, plan, skip_pending(statuses), results)
    note = {"note": STOPPED_NOTE.format(id=step.id, reason=check.reason or "no reason")}
    return {**update, "observations": [*state.observations, note]}


def step_result(state: DuckState) -> tuple[str, bool]:
    """What the current step's action loop ended with, and whether its last tool call failed."""
    mine = state.messages[state.step_started_at :]
    last_tool = next((m for m in reversed(mine) if isinstance(m, ToolMessage)), None)
    failed = last_tool is not None and last_tool.status == "error"
    last = mine[-1] if mine else None
    if isinstance(last, AIMessage) and last.text.strip() and not last.tool_calls:
        return last.text.strip(), failed
    if last_tool is not None:
        return f"{last_tool.name}: {last_tool.text.strip()}", failed
    return NO_RESULT, failed


async def _check(
    state: DuckState, runtime: Runtime[DuckContext], step: PlanStep, result: str, failed: bool
) -> tuple[StepCheck, str]:
    """The critic's check of the step; the step's own outcome when there is none."""
    ok = not failed and result != NO_RESULT
    reason = "its last tool call failed" if failed else ("" if ok else NO_RESULT)
    own = StepCheck(score=1.0 if ok else 0.0, ok=ok, reason=reason)
    if not state.run_critic:
        return own, "result"
    ctx = runtime.context
    system = system_prompt(ctx, "critic", StepCheck.model_json_schema(), workspace=state.workspace)
    request = CHECK_REQUEST.format(id=step.id, goal=step.goal, result=clip_result(result))
    try:
        return await ask_validated(
            ctx, "critic", StepCheck, with_system(system, [HumanMessage(request)])
        ), "critic"
    except Exception:  # the documented fallback: the step's own result decides
        log.warning("the critic could not check a plan step", exc_info=True)
        return own, "result"
