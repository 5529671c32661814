"""Moving through a plan: the state update that starts its next step, or ends it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langgraph.runtime import Runtime

from ducklm.graph.state import DuckState
from ducklm.kit.events import emit
from ducklm.turn.planning.plans import Plan, StepResults, StepStatuses, next_step

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext


def begin_next_step(
    state: DuckState,
    runtime: Runtime[DuckContext],
    plan: Plan,
    statuses: StepStatuses,
    results: StepResults,
) -> dict[str, Any]:
    """The state update that starts the plan's next step, or ends the plan."""
    chosen = next_step(plan, statuses)
    for step_id in chosen.blocked:
        statuses[step_id] = "skipped"
    if chosen.step_id is not None:
        statuses[chosen.step_id] = "running"
        step_started(runtime, plan, chosen.step_id, attempt=1)
    return {
        "plan": plan,
        "plan_status": statuses,
        "plan_results": results,
        "current_step": chosen.step_id or "",
        "step": 0,
        "step_attempts": 0,
        "step_feedback": "",
        "step_started_at": len(state.messages),
        "final": "",
    }


def step_started(runtime: Runtime[DuckContext], plan: Plan, step_id: str, attempt: int) -> None:
    """Tell the stream that `step_id` starts (again, for `attempt` 2)."""
    step = plan.step(step_id)
    index = [s.id for s in plan.steps].index(step_id) + 1
    emit(runtime, "plan_step_started", step_id=step_id, goal=step.goal, attempt=attempt,
         index=index, total=len(plan.steps))  # fmt: skip


def skip_pending(statuses: StepStatuses) -> StepStatuses:
    """`statuses` with every step that has not ended marked skipped."""
    return {k: "skipped" if v in ("pending", "running") else v for k, v in statuses.items()}
