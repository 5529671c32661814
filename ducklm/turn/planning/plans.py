"""Plans: steps with dependencies, validated, ordered, and stepped through.

The thinker role writes a plan as JSON; `validate_plan` turns it into a `Plan` or raises
`PlanError` with a message a small model can act on in one repair round (the graph then
falls back to `single_step_plan`). Choices, where a small model's output is ambiguous:

- A bare list of step objects is taken as the plan (small models drop the wrapper);
  numeric ids become strings; `depends_on` may be one id, `null` or a list.
- Unknown fields inside a step are rejected: a misnamed `dependencies` would otherwise
  be lost without a word and the steps run in the wrong order. Extra top-level keys
  (a "reasoning" or "title" next to "steps") are ignored; they change nothing.
- An unknown `tool` is dropped (the step keeps its goal), not rejected: the hint does not
  drive execution, the action role picks the tools, and a repair round for it would
  cost a model call on the one field that does not matter. A name in another case
  becomes the known spelling.

The graph state holds the `Plan` itself (frozen; LangGraph's checkpoint serializer
stores pydantic models) and the statuses and results as `StepStatuses` / `StepResults`:
scalars by step id, for which a model would add nothing but a class name to every
checkpoint. Events carry `plan_json(plan)`. Everything here is pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

StepStatus = Literal["pending", "running", "done", "failed", "skipped"]
StepStatuses = dict[str, StepStatus]
"""Each step's status by step id (`DuckState.plan_status`)."""
StepResults = dict[str, str]
"""A short result of each finished step by step id (`DuckState.plan_results`)."""
BLOCKING: frozenset[str] = frozenset({"failed", "skipped"})
"""A dependency in one of these statuses never produces the result its dependents need."""
ID_CHARS = 40
GOAL_CHARS = 500
ELLIPSIS = "\u2026"

NOT_JSON = "The plan is not valid JSON. Reply with one JSON object: {shape}."
NOT_A_PLAN = "The reply is {kind}, not a plan. Reply with one JSON object: {shape}."
BAD_FIELDS = "The plan does not fit the format: {problems}. Reply with one JSON object: {shape}."
EMPTY = "The plan has no steps. Give at least one step."
TOO_MANY = "The plan has {count} steps; at most {limit} are allowed. Merge related steps."
DUPLICATE_ID = "Step id {id!r} is used {count} times. Give every step its own id."
SELF_DEPENDENCY = "Step {id!r} depends on itself. Remove {id!r} from its depends_on."
MISSING_DEPENDENCY = (
    "Step {id!r} depends on {missing!r}, which is not a step. Use only these ids: {ids}."
)
CYCLE = "The steps depend on each other in a circle: {cycle}. Remove one of these dependencies."
SHAPE = '{"steps": [{"id": "1", "goal": "...", "tool": null, "depends_on": []}, ...]}'
MAX_PROBLEMS = 3
KINDS: dict[type, str] = {
    str: "text",
    int: "a number",
    float: "a number",
    bool: "true or false",
    type(None): "null",
}


class PlanError(ValueError):
    """A plan is invalid; the message tells the model what to change."""


class PlanStep(BaseModel):
    """One step: what to achieve, the tool or role expected, and what must come first."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=ID_CHARS)
    goal: str = Field(min_length=1)
    tool: str | None = None
    """A tool or role name the step is expected to use; a hint, not a constraint."""
    depends_on: list[str] = Field(default_factory=list)
    """Ids of the steps whose results this step needs."""

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: object) -> object:
        # Small models number their steps: 1 and "1" are the same id.
        return str(value).strip() if isinstance(value, int | str) else value

    @field_validator("goal", mode="before")
    @classmethod
    def _goal_text(cls, value: object) -> object:
        return value.strip() if isinstance(value, str) else value

    @field_validator("tool", mode="before")
    @classmethod
    def _tool_text(cls, value: object) -> object:
        return (value.strip() or None) if isinstance(value, str) else value

    @field_validator("depends_on", mode="before")
    @classmethod
    def _dependency_list(cls, value: object) -> object:
        if value is None:
            return []
        items = [value] if isinstance(value, int | str) else value
        if not isinstance(items, list):
            return items
        ids = [str(item).strip() if isinstance(item, int | str) else item for item in items]
        # A dependency named twice is one dependency; order kept for the reader.
        return list(dict.fromkeys(ids)) if all(isinstance(i, str) for i in ids) else ids


class Plan(BaseModel):
    """The steps of a task, in the order the thinker wrote them."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    steps: list[PlanStep]

    def step(self, step_id: str) -> PlanStep:
        """The step called `step_id` (`KeyError` when there is none)."""
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)


def validate_plan(raw: object, *, max_steps: int, known: set[str]) -> Plan:
    """Check a model's plan and return it as a `Plan`.

    Args:
        raw: The parsed JSON (or the JSON text) of the thinker's reply.
        max_steps: The most steps a plan may have.
        known: Tool and role names a step's `tool` may name; others are dropped.

    Raises:
        PlanError: The plan is unusable; the message says what to change.
    """
    plan = _parse(raw)
    _check_size(plan, max_steps)
    _check_ids(plan)
    _check_dependencies(plan)
    cycle = find_cycle(plan)
    if cycle:
        raise PlanError(CYCLE.format(cycle=" -> ".join(cycle)))
    return _known_tools(plan, known)


def _parse(raw: object) -> Plan:
    if isinstance(raw, str | bytes):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise PlanError(NOT_JSON.format(shape=SHAPE)) from None
    if isinstance(raw, list) and all(isinstance(item, dict) for item in raw):
        raw = {"steps": raw}
    if not isinstance(raw, dict):
        raise PlanError(NOT_A_PLAN.format(kind=_kind(raw), shape=SHAPE))
    try:
        return Plan.model_validate(raw)
    except ValidationError as error:
        raise PlanError(BAD_FIELDS.format(problems=_problems(error), shape=SHAPE)) from None


def _kind(value: object) -> str:
    if isinstance(value, list):
        return "a list of plain values"
    return KINDS.get(type(value), type(value).__name__)


def _problems(error: ValidationError) -> str:
    """The first few validation problems, each as "where: what" a model can read."""
    lines = []
    for problem in error.errors()[:MAX_PROBLEMS]:
        where = _where(problem["loc"])
        if problem["type"] == "extra_forbidden":
            lines.append(f"{where} is not a field (the fields are id, goal, tool, depends_on)")
        elif problem["type"] == "missing":
            lines.append(f"{where} is missing")
        else:
            lines.append(f"{where}: {problem['msg']}")
    more = len(error.errors()) - MAX_PROBLEMS
    return "; ".join(lines) + (f"; and {more} more" if more > 0 else "")


def _where(loc: tuple[int | str, ...]) -> str:
    """A location such as `steps[0].goal`."""
    text = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
    return text.lstrip(".") or "the plan"


def _check_size(plan: Plan, max_steps: int) -> None:
    if not plan.steps:
        raise PlanError(EMPTY)
    if len(plan.steps) > max_steps:
        raise PlanError(TOO_MANY.format(count=len(plan.steps), limit=max_steps))


def _check_ids(plan: Plan) -> None:
    ids = [step.id for step in plan.steps]
    for step_id in dict.fromkeys(ids):
        if ids.count(step_id) > 1:
            raise PlanError(DUPLICATE_ID.format(id=step_id, count=ids.count(step_id)))


def _check_dependencies(plan: Plan) -> None:
    ids = [step.id for step in plan.steps]
    for step in plan.steps:
        for dependency in step.depends_on:
            if dependency == step.id:
                raise PlanError(SELF_DEPENDENCY.format(id=step.id))
            if dependency not in ids:
                raise PlanError(
                    MISSING_DEPENDENCY.format(id=step.id, missing=dependency, ids=", ".join(ids))
                )


def find_cycle(plan: Plan) -> list[str] | None:
    """A dependency cycle as ids, first id repeated at the end (`["a", "b", "a"]`), or `None`.

    Dependencies on ids that are not steps are ignored here.
    """
    needs = {step.id: list(step.depends_on) for step in plan.steps}
    state: dict[str, str] = {}  # absent: unseen, "open": on the current path, "closed": done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for dependency in needs.get(node, []):
            if state.get(dependency) == "open":
                return [*path[path.index(dependency) :], dependency]
            if dependency in needs and dependency not in state:
                cycle = visit(dependency)
                if cycle:
                    return cycle
        state[node] = "closed"
        path.pop()
        return None

    for step_id in needs:
        if step_id not in state:
            cycle = visit(step_id)
            if cycle:
                return cycle
    return None


def _known_tools(plan: Plan, known: set[str]) -> Plan:
    by_folded = {name.casefold(): name for name in known}
    steps = [
        step.model_copy(update={"tool": by_folded.get(step.tool.casefold())}) if step.tool else step
        for step in plan.steps
    ]
    return Plan(steps=steps)


def single_step_plan(task: str) -> Plan:
    """The plan that replaces an invalid one: the whole task as one step."""
    goal = " ".join(task.split()) or "Answer the request."
    if len(goal) > GOAL_CHARS:
        goal = goal[: GOAL_CHARS - 1] + ELLIPSIS
    return Plan(steps=[PlanStep(id="1", goal=goal)])


def execution_order(plan: Plan) -> list[str]:
    """Step ids in a stable topological order: dependencies first, ties in the plan's order.

    Raises:
        PlanError: The plan has a cycle (`validate_plan` rejects those first).
    """
    order: list[str] = []
    placed: set[str] = set()
    remaining = list(plan.steps)
    while remaining:
        ready = next((s for s in remaining if placed.issuperset(s.depends_on)), None)
        if ready is None:
            cycle = find_cycle(plan) or [s.id for s in remaining]
            raise PlanError(CYCLE.format(cycle=" -> ".join(cycle)))
        order.append(ready.id)
        placed.add(ready.id)
        remaining.remove(ready)
    return order


def initial_statuses(plan: Plan) -> StepStatuses:
    """Every step pending."""
    return {step.id: "pending" for step in plan.steps}


@dataclass(frozen=True)
class NextStep:
    """Which step runs next, and which pending steps can never run."""

    step_id: str | None
    """The step to run (a step already `running` first: it resumes); `None` when none can."""
    blocked: tuple[str, ...]
    """Pending steps with a failed or skipped dependency, directly or through another step."""

    @property
    def finished(self) -> bool:
        """Nothing is left to run: every step ended, or the rest are blocked."""
        return self.step_id is None


def next_step(plan: Plan, statuses: Mapping[str, str]) -> NextStep:
    """Pick the step to run from the plan and its steps' statuses (missing: pending).

    A step `running` in `statuses` was interrupted (an approval, a restart) and is picked
    again. Otherwise the first pending step in `execution_order` whose dependencies are
    all done. A failed or skipped dependency blocks its dependents and theirs.
    """
    order = execution_order(plan)
    status = {step_id: statuses.get(step_id, "pending") for step_id in order}
    blocked: set[str] = set()
    for step_id in order:  # dependencies come first, so blocking spreads in one pass
        needs = plan.step(step_id).depends_on
        if status[step_id] == "pending" and any(
            status[d] in BLOCKING or d in blocked for d in needs
        ):
            blocked.add(step_id)
    running = next((s for s in order if status[s] == "running"), None)
    ready = next(
        (
            s
            for s in order
            if status[s] == "pending"
            and s not in blocked
            and all(status[d] == "done" for d in plan.step(s).depends_on)
        ),
        None,
    )
    return NextStep(running or ready, tuple(s for s in order if s in blocked))


def plan_json(plan: Plan) -> dict[str, Any]:
    """The plan as plain JSON, for events."""
    return plan.model_dump(mode="json")
