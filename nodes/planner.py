"""planner: the thinker role writes a plan for a task the router marked multi-step.

The plan is validated (`ducklm.turn.planning.plans`); an invalid one goes back to the thinker once
with what is wrong, then is replaced by a one-step plan, so a small model's junk never
stops the turn. The same asking serves revisions, after a step failed twice.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from ducklm.graph.state import DuckState
from ducklm.kit.events import emit
from ducklm.models.roles import ROLE_NAMES
from ducklm.turn.planning.flow import begin_next_step
from ducklm.turn.planning.plans import (
    Plan,
    PlanError,
    StepResults,
    StepStatuses,
    initial_statuses,
    plan_json,
    single_step_plan,
    validate_plan,
)
from ducklm.turn.prompting.structured import JSONReplyError, parse_json, system_prompt, with_system

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

MAX_PLAN_STEPS = 6
"""More steps than a small model can carry through one turn's budget."""

PLAN_REQUEST = """Break this request into at most {max_steps} steps done one after another.
Each step has an "id", a "goal" (one sentence), the "tool" it will mostly use (one of:
{tools}; or null) and "depends_on" (ids of steps whose results it needs).
Request: {task}"""
REVISE_REQUEST = """A plan for this request ran into a failure.
Request: {task}
Done so far:
{done}
Failed step: {failed} ({reason})
Write a new plan, of at most {max_steps} steps, for what is still missing. Its steps may
depend only on each other. Tools: {tools}."""
REPAIR_REQUEST = "That plan cannot be used: {problem} Reply again with only the JSON object."

log = logging.getLogger(__name__)


async def write_plan(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Ask for a plan, validate it, and start its first step."""
    ctx = runtime.context
    request = PLAN_REQUEST.format(
        max_steps=MAX_PLAN_STEPS, tools=", ".join(ctx.tools.names), task=state.task
    )
    written, problem = await ask_for_plan(ctx, state, request)
    plan = written or single_step_plan(state.task)
    emit(runtime, "plan_created", plan=plan_json(plan), fallback=written is None, problem=problem)
    return begin_next_step(state, runtime, plan, initial_statuses(plan), {})


async def ask_for_plan(
    ctx: DuckContext, state: DuckState, request: str
) -> tuple[Plan | None, str | None]:
    """The thinker's plan for `request`, repaired once; `None` and the problem otherwise."""
    schema = Plan.model_json_schema()
    system = system_prompt(ctx, "thinker", schema, workspace=state.workspace)
    messages: list[BaseMessage] = with_system(system, [HumanMessage(request)])
    known = set(ctx.tools.names) | set(ROLE_NAMES)
    client = ctx.models.json_client("thinker", "Plan", schema)
    problem: str | None = None
    for _attempt in range(2):
        try:
            text = (await client.ainvoke(messages)).text
        except Exception:  # a model failure leaves the one-step plan, never a failed turn
            log.warning("the thinker could not write a plan", exc_info=True)
            return None, "the model could not be asked for a plan"
        try:
            return validate_plan(parse_json(text), max_steps=MAX_PLAN_STEPS, known=known), None
        except (JSONReplyError, PlanError) as exc:
            problem = str(exc)
        messages = [
            *messages,
            AIMessage(content=text),
            HumanMessage(REPAIR_REQUEST.format(problem=problem)),
        ]
    return None, problem


async def revise_plan(
    state: DuckState,
    runtime: Runtime[DuckContext],
    plan: Plan,
    statuses: StepStatuses,
    *,
    results: StepResults,
    reason: str,
) -> dict[str, Any] | None:
    """Replace what is left of `plan` with the thinker's new steps; `None` if it has none.

    Done steps stay (with their results); the failed and unstarted ones give way to the
    new steps, renamed `r1`, `r2`, ... so their ids cannot clash with the old ones.
    """
    ctx = runtime.context
    failed = next(s for s in plan.steps if statuses.get(s.id) == "failed")
    done = [s for s in plan.steps if statuses.get(s.id) == "done"]
    request = REVISE_REQUEST.format(
        task=state.task,
        done="\n".join(f"- {s.id}: {s.goal} -> {results.get(s.id, '')}" for s in done)
        or "(nothing)",
        failed=f"{failed.id}: {failed.goal}",
        reason=reason or "it did not succeed",
        max_steps=MAX_PLAN_STEPS,
        tools=", ".join(ctx.tools.names),
    )
    new, _problem = await ask_for_plan(ctx, state, request)
    if new is None:
        return None
    renamed = _renamed(new, prefix="r")
    kept = [s for s in plan.steps if statuses.get(s.id) in ("done", "failed")]
    revised = Plan(steps=[*kept, *renamed.steps])
    kept_statuses = {s.id: statuses[s.id] for s in kept}
    emit(runtime, "plan_revised", plan=plan_json(revised), failed_step=failed.id, reason=reason)
    update = begin_next_step(
        state, runtime, revised, {**kept_statuses, **initial_statuses(renamed)}, results
    )
    return {**update, "plan_revisions": state.plan_revisions + 1}


def _renamed(plan: Plan, *, prefix: str) -> Plan:
    names = {step.id: f"{prefix}{n}" for n, step in enumerate(plan.steps, start=1)}
    return Plan(
        steps=[
            step.model_copy(
                update={"id": names[step.id], "depends_on": [names[d] for d in step.depends_on]}
            )
            for step in plan.steps
        ]
    )
