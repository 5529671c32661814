"""How a plan reads in the prompts.

The action role sees the current step (and earlier results it depends on); the thinker
sees the whole plan with each step's outcome, for the final answer.
"""

from __future__ import annotations

from ducklm.graph.state import DuckState

RESULT_CHARS = 400
"""Each earlier result shown to later steps and to the thinker, at most (the budget)."""

STEP_BRIEF = """

You are working on step {id} of a plan for the request: {goal}{hint}
Do only this step. When it is done, reply with its result in a sentence or two, without
calling a tool.{earlier}"""
RETRY = "\nThis is the step's second attempt; the first was judged a failure: {reason}"
PLAN_REPORT = """

The request was worked on as a plan. Its steps and what each did:
{steps}
In your answer, say briefly what each step did; say plainly which steps failed or were
skipped and what is therefore missing."""


def step_brief(state: DuckState) -> str:
    """Text for the action role's system prompt while a plan step runs; "" otherwise."""
    plan = state.plan
    if plan is None or not state.current_step:
        return ""
    step = plan.step(state.current_step)
    hint = f" (expected: {step.tool})" if step.tool else ""
    earlier = [
        f"- {dep}: {clip_result(state.plan_results[dep])}"
        for dep in step.depends_on or [s.id for s in plan.steps if s.id in state.plan_results]
        if dep in state.plan_results
    ]
    shown = "\nResults of earlier steps:\n" + "\n".join(earlier) if earlier else ""
    if state.step_feedback:
        shown += RETRY.format(reason=clip_result(state.step_feedback))
    return STEP_BRIEF.format(id=step.id, goal=step.goal, hint=hint, earlier=shown)


def plan_report(state: DuckState) -> str:
    """Text for the thinker's system prompt after a plan ran; "" without a plan."""
    plan = state.plan
    if plan is None:
        return ""
    lines = []
    for step in plan.steps:
        status = state.plan_status.get(step.id, "pending")
        result = state.plan_results.get(step.id)
        lines.append(
            f"- [{status}] {step.id}: {step.goal}"
            + (f" -> {clip_result(result)}" if result else "")
        )
    return PLAN_REPORT.format(steps="\n".join(lines))


def clip_result(text: str) -> str:
    """`text` on one line, at most RESULT_CHARS long."""
    text = " ".join(text.split())
    return text if len(text) <= RESULT_CHARS else text[: RESULT_CHARS - 1] + "\u2026"
