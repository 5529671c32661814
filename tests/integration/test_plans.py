"""Plans through the whole graph on the scripted model server: the router's decision,
three steps with an approval and restarts, a failing step retried then revised, and junk
plans replaced by a one-step plan."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from ducklm.config.settings import Settings
from ducklm.kit.events import Event
from ducklm.runtime.facade import DuckLM
from ducklm.runtime.transcript import transcript_lines
from tests.support.role_script import RoleScript
from tests.support.scripted_llm import ScriptedLLM, call, reply

THREE_STEPS = {
    "steps": [
        {"id": "1", "goal": "Create notes.txt", "tool": "file_write", "depends_on": []},
        {"id": "2", "goal": "Replace its text", "tool": "file_write", "depends_on": ["1"]},
        {"id": "3", "goal": "List the folder", "tool": "list_dir", "depends_on": ["2"]},
    ]
}
TASK = "First create notes.txt, then replace its text, and then list the folder."


def of(events: list[Event], type_: str) -> list[Event]:
    return [e for e in events if e["type"] == type_]


def steps(events: list[Event], type_: str) -> list[tuple[Any, ...]]:
    """(step id, status or attempt) of each plan step event of `type_`."""
    key = "status" if type_ == "plan_step_finished" else "attempt"
    return [(e["step_id"], e[key]) for e in of(events, type_)]


async def test_three_steps_with_an_approval_and_restarts_resume_where_they_stopped(
    settings: Settings, model: RoleScript, llm: ScriptedLLM, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    model.plans.append(json.dumps(THREE_STEPS))
    model.actions.extend([
        reply(tool_calls=[call("file_write", path="notes.txt", content="one")]),
        reply("Created notes.txt."),
        reply(tool_calls=[call("file_write", path="notes.txt", content="two", overwrite=True)]),
    ])  # fmt: skip
    async with DuckLM.open(settings) as duck:
        first = await duck.run(TASK, thread_id="p1", critic=False, memory=False)
    assert first.status == "interrupted", first.events
    (route,) = of(first.events, "route_decided")
    assert route["plan"] is True and route["coder"] is False
    (created,) = of(first.events, "plan_created")
    assert [s["id"] for s in created["plan"]["steps"]] == ["1", "2", "3"]
    assert steps(first.events, "plan_step_started") == [("1", 1), ("2", 1)]
    assert steps(first.events, "plan_step_finished") == [("1", "done")]
    assert await asyncio.to_thread(notes.read_text) == "one", "step 2 waits for the approval"
    # Step 2 sees step 1's result; the action role is told it works on one step.
    assert "step 2 of a plan" in model.action_systems[-1]
    assert "Created notes.txt." in model.action_systems[-1]

    # The process restarts while step 2 waits; the new one resumes with the approval.
    # Step 2 finishes, and step 3's first model call fails for good: the run fails.
    model.actions.append(reply("Replaced the text."))
    attempts = settings.model_retry_attempts
    model.actions.extend(reply(status=500) for _ in range(attempts))
    async with DuckLM.open(settings) as duck:
        second = [e async for e in duck.resume("p1", [{"type": "approve"}])]
    assert second[-1]["status"] == "failed", second
    assert await asyncio.to_thread(notes.read_text) == "two"
    assert steps(second, "plan_step_finished") == [("2", "done")]
    assert steps(second, "plan_step_started") == [("3", 1)]

    # Restarted again, before step 3 did anything: the run goes on at step 3.
    model.actions.extend([
        reply(tool_calls=[call("list_dir", path=".")]),
        reply("The folder holds notes.txt."),
    ])  # fmt: skip
    model.answers.append("Created notes.txt, replaced its text, and listed the folder.")
    async with DuckLM.open(settings) as duck:
        third = [e async for e in duck.continue_run("p1")]
        state = await duck.state("p1")
    assert third[-1]["status"] == "completed", third
    assert third[-1]["answer"] == "Created notes.txt, replaced its text, and listed the folder."
    assert of(third, "plan_step_started") == [], "step 3 had already started"
    assert steps(third, "plan_step_finished") == [("3", "done")]
    assert [e["tool"] for e in of(third, "tool_call_finished")] == ["list_dir"]
    assert state is not None
    assert state.plan_status == {"1": "done", "2": "done", "3": "done"}
    # The answer was written from the whole plan, each step with its outcome.
    report = model.thinker_systems[-1]
    assert "[done] 1: Create notes.txt -> Created notes.txt." in report
    assert "[done] 3: List the folder -> The folder holds notes.txt." in report


async def test_a_failing_step_is_retried_then_the_plan_revised(
    duck: DuckLM, model: RoleScript, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "a.txt").write_text, "hi")
    model.plans.extend([
        json.dumps({"steps": [
            {"id": "1", "goal": "Quote a.txt", "tool": "file_read"},
            {"id": "2", "goal": "Count its words", "depends_on": ["1"]},
        ]}),
        json.dumps({"steps": [{"id": "1", "goal": "Read a.txt and quote it exactly"}]}),
    ])  # fmt: skip
    model.actions.extend([
        reply(tool_calls=[call("file_read", path="a.txt")]),
        reply("It greets."),
        reply("It says hello."),
        reply(tool_calls=[call("file_read", path="a.txt")]),
        reply('It says "hi".'),
    ])  # fmt: skip
    model.checks.extend(
        [
            {"score": 0.2, "ok": False, "reason": "it did not quote the file"},
            {"score": 0.3, "ok": False, "reason": "still no quote"},
            {"score": 0.9, "ok": True, "reason": "quoted"},
        ]
    )
    model.answers.append('a.txt says "hi"; step 2 was dropped when the plan changed.')
    result = await duck.run("First quote a.txt, then count its words.", memory=False)

    assert result.status == "completed", result.events
    assert steps(result.events, "plan_step_started") == [("1", 1), ("1", 2), ("r1", 1)]
    finished = of(result.events, "plan_step_finished")
    assert [(e["step_id"], e["status"], e.get("retry")) for e in finished] == [
        ("1", "failed", True),
        ("1", "failed", False),
        ("r1", "done", None),
    ]
    assert all(e["judged_by"] == "critic" for e in finished)
    (revised,) = of(result.events, "plan_revised")
    assert [s["id"] for s in revised["plan"]["steps"]] == ["1", "r1"]
    assert revised["failed_step"] == "1"
    # The second attempt was told why the first failed.
    assert "it did not quote the file" in model.action_systems[2]
    report = model.thinker_systems[-1]
    assert "[failed] 1: Quote a.txt" in report
    assert "[done] r1: Read a.txt and quote it exactly" in report


async def test_junk_plans_become_one_step(duck: DuckLM, model: RoleScript) -> None:
    model.plans.extend(["not a plan", json.dumps({"steps": [{"id": "a", "depends_on": ["a"]}]})])
    model.actions.append(reply("Both done."))
    model.answers.append("I did both.")
    result = await duck.run("First say one thing, then say another.", critic=False, memory=False)
    assert result.status == "completed", result.events
    (created,) = of(result.events, "plan_created")
    assert created["fallback"] is True
    assert "steps[0].goal" in created["problem"]
    assert [s["goal"] for s in created["plan"]["steps"]] == [
        "First say one thing, then say another."
    ]
    assert steps(result.events, "plan_step_finished") == [("1", "done")]
    assert result.answer == "I did both."


async def test_a_single_request_has_no_plan(duck: DuckLM, model: RoleScript) -> None:
    model.actions.append(reply("Ducks eat plants."))
    result = await duck.run("What do ducks eat?", critic=False, memory=False)
    (route,) = of(result.events, "route_decided")
    assert route["plan"] is False
    assert route["reasons"][1].startswith("A question")
    assert not of(result.events, "plan_created")
    assert result.answer == "Ducks eat plants."


async def test_in_json_tool_mode_a_directive_without_actions_ends_the_step(
    settings: Settings, llm: ScriptedLLM, model: RoleScript, tmp_path: Path
) -> None:
    models = tmp_path / "models.yaml"
    text = (
        f"defaults: {{base_url: {llm.base_url}, model: m}}\nroles:\n  action: {{tool_mode: json}}\n"
    )
    await asyncio.to_thread(models.write_text, text)
    model.plans.append(
        json.dumps(
            {"steps": [{"id": "1", "goal": "Say one thing"}, {"id": "2", "goal": "Say another"}]}
        )
    )
    model.actions.extend(
        reply(json.dumps({"reasoning": said, "actions": []})) for said in ("Said one.", "Said two.")
    )
    model.answers.append("Both said.")
    async with DuckLM.open(settings.model_copy(update={"models_config": models})) as duck:
        result = await duck.run(
            "First say one thing, then say another.", critic=False, memory=False
        )
        # The steps' results are working, not answers: a reopened turn has one answer.
        (exchange,) = await duck.transcript(result.thread_id)
    said = [line for line in transcript_lines([exchange]) if line.startswith("duck: ")]
    assert said == ["duck: Both said."]
    assert result.status == "completed", result.events
    finished = of(result.events, "plan_step_finished")
    assert [(e["step_id"], e["status"], e["result"]) for e in finished] == [
        ("1", "done", "Said one."),
        ("2", "done", "Said two."),
    ]
    assert "Said one." in model.action_systems[1], "step 2 sees step 1's result"
