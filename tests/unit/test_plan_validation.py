"""Plan validation, execution order and next-step selection."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ducklm.turn.planning.plans import (
    NextStep,
    Plan,
    PlanError,
    PlanStep,
    execution_order,
    find_cycle,
    initial_statuses,
    next_step,
    plan_json,
    single_step_plan,
    validate_plan,
)

KNOWN = {"file_read", "file_write", "shell_exec", "coder", "thinker"}


def step(step_id: str, *depends_on: str, tool: str | None = None) -> dict[str, Any]:
    return {"id": step_id, "goal": f"do {step_id}", "tool": tool, "depends_on": list(depends_on)}


def check(raw: object, max_steps: int = 5) -> Plan:
    return validate_plan(raw, max_steps=max_steps, known=KNOWN)


def rejected(raw: object, max_steps: int = 5) -> str:
    with pytest.raises(PlanError) as caught:
        check(raw, max_steps)
    return str(caught.value)


def test_a_valid_plan() -> None:
    plan = check({"steps": [step("read", tool="file_read"), step("fix", "read", tool="coder")]})
    assert [s.id for s in plan.steps] == ["read", "fix"]
    assert plan.step("fix").depends_on == ["read"]
    assert plan.step("fix").tool == "coder"


def test_small_model_habits_are_accepted() -> None:
    raw = [
        {"id": 1, "goal": "  read the file ", "tool": "File_Read"},
        {"id": 2, "goal": "fix it", "depends_on": 1, "tool": ""},
        {"id": "3", "goal": "test it", "depends_on": ["2", 2, "1"], "tool": None},
        {"id": "4", "goal": "report", "depends_on": None},
    ]
    plan = check(raw)  # a bare list is the plan
    assert [s.id for s in plan.steps] == ["1", "2", "3", "4"]
    assert plan.steps[0].goal == "read the file"
    assert plan.steps[0].tool == "file_read"  # the known spelling
    assert plan.steps[1].tool is None
    assert plan.steps[1].depends_on == ["1"]
    assert plan.steps[2].depends_on == ["2", "1"]  # named twice is one dependency
    assert plan.steps[3].depends_on == []


def test_unknown_tool_hint_is_dropped_not_rejected() -> None:
    plan = check({"steps": [step("a", tool="web_search")]})
    assert plan.steps[0].tool is None
    assert plan.steps[0].goal == "do a"


def test_extra_top_level_keys_are_ignored() -> None:
    plan = check({"reasoning": "short plan", "title": "x", "steps": [step("a")]})
    assert [s.id for s in plan.steps] == ["a"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param({"steps": [step("a", "b"), step("b", "a")]}, "a -> b -> a", id="two"),
        pytest.param(
            {"steps": [step("a", "c"), step("b", "a"), step("c", "b")]},
            "a -> c -> b -> a",
            id="three",
        ),
        pytest.param(
            {"steps": [step("start"), step("x", "start", "z"), step("y", "x"), step("z", "y")]},
            "x -> z -> y -> x",
            id="behind-a-valid-step",
        ),
    ],
)
def test_cycles_are_named(raw: object, expected: str) -> None:
    message = rejected(raw)
    assert f"circle: {expected}." in message
    assert "Remove one of these dependencies" in message


def test_self_dependency() -> None:
    assert rejected({"steps": [step("a"), step("b", "b")]}) == (
        "Step 'b' depends on itself. Remove 'b' from its depends_on."
    )


def test_missing_dependency_lists_the_ids() -> None:
    assert rejected({"steps": [step("a"), step("b", "c")]}) == (
        "Step 'b' depends on 'c', which is not a step. Use only these ids: a, b."
    )


def test_duplicate_ids() -> None:
    message = rejected({"steps": [step("a"), step("b"), {"id": "a", "goal": "again"}]})
    assert message == "Step id 'a' is used 2 times. Give every step its own id."


def test_numeric_and_text_ids_collide() -> None:
    assert "used 2 times" in rejected([{"id": 1, "goal": "x"}, {"id": "1", "goal": "y"}])


def test_too_many_steps() -> None:
    raw = {"steps": [step(str(n)) for n in range(7)]}
    assert rejected(raw, max_steps=6) == (
        "The plan has 7 steps; at most 6 are allowed. Merge related steps."
    )
    assert len(check(raw, max_steps=7).steps) == 7


@pytest.mark.parametrize("raw", [{"steps": []}, [], "[]", '{"steps": []}'], ids=str)
def test_empty_plan(raw: object) -> None:
    assert rejected(raw) == "The plan has no steps. Give at least one step."


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("Sure! Here is my plan: read, then fix.", "not valid JSON", id="prose"),
        pytest.param('{"steps": [', "not valid JSON", id="cut-off-json"),
        pytest.param('"read the file"', "The reply is text, not a plan", id="json-string"),
        pytest.param(None, "The reply is null", id="none"),
        pytest.param(42, "The reply is a number", id="number"),
        pytest.param(True, "The reply is true or false", id="bool"),
        pytest.param(["read", "fix"], "a list of plain values", id="list-of-strings"),
        pytest.param([step("a"), "fix"], "a list of plain values", id="mixed-list"),
        pytest.param({"plan": [step("a")]}, "steps is missing", id="wrong-wrapper"),
        pytest.param(
            {"steps": "read then fix"}, "steps: Input should be a valid list", id="steps-text"
        ),
        pytest.param({"steps": ["read"]}, "steps[0]: Input should be", id="step-is-text"),
        pytest.param({"steps": [{"id": "a"}]}, "steps[0].goal is missing", id="no-goal"),
        pytest.param({"steps": [{"goal": "x"}]}, "steps[0].id is missing", id="no-id"),
        pytest.param({"steps": [{"id": "a", "goal": " "}]}, "steps[0].goal", id="blank-goal"),
        pytest.param({"steps": [{"id": "", "goal": "x"}]}, "steps[0].id", id="blank-id"),
        pytest.param({"steps": [{"id": "a" * 41, "goal": "x"}]}, "at most 40", id="long-id"),
        pytest.param({"steps": [{"id": [1], "goal": "x"}]}, "steps[0].id", id="list-id"),
        pytest.param({"steps": [{"id": "a", "goal": 3}]}, "steps[0].goal", id="number-goal"),
        pytest.param(
            {"steps": [{"id": "a", "goal": "x", "depends_on": {"b": 1}}]},
            "steps[0].depends_on",
            id="dict-depends-on",
        ),
        pytest.param(
            {"steps": [{"id": "a", "goal": "x", "dependencies": ["b"]}]},
            "steps[0].dependencies is not a field (the fields are id, goal, tool, depends_on)",
            id="misnamed-field",
        ),
    ],
)
def test_junk_is_rejected_with_a_repairable_message(raw: object, expected: str) -> None:
    message = rejected(raw)
    assert expected in message
    assert len(message) < 400


def test_many_field_problems_are_summarised() -> None:
    message = rejected({"steps": [{"x": n} for n in range(4)]})
    assert "steps[0].id is missing; steps[0].goal is missing; steps[0].x is not a field" in message
    assert "and 9 more" in message  # 4 x (id, goal, x) = 12 problems, 3 shown


def test_json_text_is_parsed() -> None:
    assert check(json.dumps({"steps": [step("a")]})).steps[0].id == "a"


def test_single_step_plan() -> None:
    plan = single_step_plan("  Summarise   the\nreport  ")
    assert plan.steps == [PlanStep(id="1", goal="Summarise the report")]
    assert check(plan_json(plan)) == plan
    assert len(single_step_plan("x" * 2000).steps[0].goal) == 500
    assert single_step_plan("").steps[0].goal


def test_execution_order_is_stable() -> None:
    plan = check(
        {"steps": [step("report", "fix", "lint"), step("read"), step("fix", "read"), step("lint")]}
    )
    assert execution_order(plan) == ["read", "fix", "lint", "report"]
    independent = check({"steps": [step("c"), step("a"), step("b")]})
    assert execution_order(independent) == ["c", "a", "b"]  # ties keep the plan's order


def test_execution_order_refuses_a_cycle() -> None:
    plan = Plan(
        steps=[
            PlanStep(id="a", goal="x", depends_on=["b"]),
            PlanStep(id="b", goal="y", depends_on=["a"]),
        ]
    )
    assert find_cycle(plan) == ["a", "b", "a"]
    with pytest.raises(PlanError, match="a -> b -> a"):
        execution_order(plan)


# read -> fix -> test -> report; docs depends on read only.
DIAMOND = {
    "steps": [
        step("read"),
        step("fix", "read"),
        step("docs", "read"),
        step("test", "fix"),
        step("report", "test", "docs"),
    ]
}


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        pytest.param({}, NextStep("read", ()), id="start"),
        pytest.param({"read": "done"}, NextStep("fix", ()), id="after-first"),
        pytest.param({"read": "done", "fix": "running"}, NextStep("fix", ()), id="resume-running"),
        pytest.param({"read": "done", "fix": "done"}, NextStep("docs", ()), id="plan-order-tie"),
        pytest.param(
            {"read": "failed"}, NextStep(None, ("fix", "docs", "test", "report")), id="root-failed"
        ),
        pytest.param(
            {"read": "done", "fix": "failed"},
            NextStep("docs", ("test", "report")),
            id="branch-failed",
        ),
        pytest.param(
            {"read": "done", "fix": "skipped", "docs": "done"},
            NextStep(None, ("test", "report")),
            id="skipped-blocks",
        ),
        pytest.param(
            {s: "done" for s in ("read", "fix", "docs", "test", "report")},
            NextStep(None, ()),
            id="all-done",
        ),
        pytest.param(
            {"read": "done", "fix": "done", "docs": "done", "test": "done", "report": "failed"},
            NextStep(None, ()),
            id="last-failed",
        ),
        pytest.param(
            {"read": "done", "nonsense": "failed"}, NextStep("fix", ()), id="unknown-ids-ignored"
        ),
    ],
)
def test_next_step(statuses: dict[str, str], expected: NextStep) -> None:
    assert next_step(check(DIAMOND), statuses) == expected


def test_a_running_step_resumes_before_its_dependents() -> None:
    plan = check({"steps": [step("a"), step("b", "a")]})
    assert initial_statuses(plan) == {"a": "pending", "b": "pending"}
    assert next_step(plan, {"a": "running"}) == NextStep("a", ())
    assert not next_step(plan, {"a": "running"}).finished
    assert next_step(plan, {"a": "done", "b": "done"}).finished


def test_json_round_trip() -> None:
    plan = check({"steps": [step("read", tool="file_read"), step("fix", "read", tool="coder")]})
    statuses = initial_statuses(plan) | {"read": "done"}
    stored = json.loads(json.dumps({"plan": plan_json(plan), "statuses": statuses}))
    restored = Plan.model_validate(stored["plan"])
    assert restored == plan
    assert check(stored["plan"]) == plan
    assert next_step(restored, stored["statuses"]) == next_step(plan, statuses)
    assert stored["statuses"] == {"read": "done", "fix": "pending"}
