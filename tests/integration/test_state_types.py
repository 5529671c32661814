"""The state's typed fields through a real checkpointer: the types survive LangGraph's
serializer and a restart, and a thread checkpointed with the old dict forms resumes.

"Old shape" checkpoints are made by rewriting a paused thread's latest checkpoint the
way the code before the types wrote it: `route.event_fields()`, `plan_json(plan)` and
`proposal.model_dump(mode="json")`, the interrupt's pending writes left as they are.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from ducklm.config.settings import Settings
from ducklm.graph.state import CHECKPOINT_TYPES, DuckState
from ducklm.runtime.facade import DuckLM
from ducklm.stores.checkpoints import open_checkpointer
from ducklm.turn.coding.proposals import CodeProposal, CoderFailure
from ducklm.turn.planning.plans import Plan, PlanStep
from ducklm.turn.router import Route
from ducklm.turn.shortcuts import Shortcut
from tests.support.role_script import RoleScript
from tests.support.scripted_llm import call, reply

ROUTE = Route(
    recall=False, plan=True, coder=False, critique=True, reasons=["a", "b", "c", "d"],
    shortcut=Shortcut("list_dir", {"path": "."}, "list the files"),
)  # fmt: skip
PLAN = Plan(steps=[PlanStep(id="1", goal="Read"), PlanStep(id="2", goal="Sum", depends_on=["1"])])
PROPOSAL = CodeProposal(
    op="fix", path="calc.py", existed=True, old_content="a\n", new_content="b\n",
    explanation="b, not a", diff="-a\n+b\n", syntax_ok=True, syntax_error=None, attempts=1,
)  # fmt: skip
FAILURE = CoderFailure(path="calc.py", error="no file at 'calc.py' to fix")
TYPED: dict[str, Any] = {
    "route": ROUTE,
    "plan": PLAN,
    "code_proposals": {"c1": PROPOSAL, "c2": FAILURE},
}
TWO_STEPS = {
    "steps": [
        {"id": "1", "goal": "Create notes.txt", "tool": "file_write", "depends_on": []},
        {"id": "2", "goal": "Replace its text", "tool": "file_write", "depends_on": ["1"]},
    ]
}
BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"


@pytest.mark.parametrize(
    "serde",
    [JsonPlusSerializer(), JsonPlusSerializer(allowed_msgpack_modules=CHECKPOINT_TYPES)],
    ids=["default", "allowlist"],
)
def test_each_type_survives_the_serializer(serde: JsonPlusSerializer) -> None:
    for value in TYPED.values():
        assert serde.loads_typed(serde.dumps_typed(value)) == value


def test_a_serializer_that_blocks_the_types_still_gives_typed_state() -> None:
    """Strict msgpack hands unknown types back as dicts; the state turns them back."""
    written = JsonPlusSerializer().dumps_typed(TYPED)
    loaded = JsonPlusSerializer(allowed_msgpack_modules=None).loads_typed(written)
    assert isinstance(loaded["plan"], dict)
    state = DuckState(**loaded)
    assert (state.route, state.plan, state.code_proposals) == tuple(TYPED.values())


def test_the_old_dict_forms_become_the_types() -> None:
    old = {
        "route": ROUTE.event_fields(),
        "plan": PLAN.model_dump(mode="json"),
        "code_proposals": {
            "c1": PROPOSAL.model_dump(mode="json"),
            "c2": {"path": "calc.py", "error": FAILURE.error},
            "c3": {"error": "fix_code needs a text 'path' and a text 'error'"},
        },
    }
    state = DuckState(**old)
    assert state.route == ROUTE and state.plan == PLAN
    assert state.code_proposals["c1"] == PROPOSAL
    assert state.code_proposals["c2"] == FAILURE
    assert state.code_proposals["c3"] == CoderFailure(error=old["code_proposals"]["c3"]["error"])


async def test_a_plan_thread_keeps_its_types_across_a_restart(
    settings: Settings, model: RoleScript
) -> None:
    await _pause_in_a_plan_step(settings, model)
    async with DuckLM.open(settings) as duck:  # a fresh saver reads what the first wrote
        raw = (await duck.graph.aget_state({"configurable": {"thread_id": "p"}})).values
    assert isinstance(raw["route"], Route) and raw["route"].plan
    assert isinstance(raw["plan"], Plan)
    assert [s.id for s in raw["plan"].steps] == ["1", "2"]
    assert raw["plan_status"] == {"1": "done", "2": "running"}


async def test_a_plan_thread_checkpointed_with_dicts_resumes(
    settings: Settings, model: RoleScript, workspace: Path
) -> None:
    await _pause_in_a_plan_step(settings, model)
    await _rewrite_in_old_shape(settings, "p")
    model.actions.append(reply("Replaced the text."))
    model.answers.append("Created notes.txt and replaced its text.")
    async with DuckLM.open(settings) as duck:
        events = [e async for e in duck.resume("p", [{"type": "approve"}])]
        state = await duck.state("p")
    assert events[-1]["status"] == "completed", events
    assert await asyncio.to_thread((workspace / "notes.txt").read_text) == "two"
    assert state is not None and isinstance(state.plan, Plan)
    assert state.plan_status == {"1": "done", "2": "done"}
    assert "[done] 2: Replace its text -> Replaced the text." in model.thinker_systems[-1]


async def test_a_coder_thread_checkpointed_with_dicts_writes_the_approved_change(
    settings: Settings, model: RoleScript, workspace: Path
) -> None:
    target = workspace / "calc.py"
    await asyncio.to_thread(target.write_text, BROKEN)
    model.actions.append(reply(tool_calls=[call("fix_code", path="calc.py", error="wrong sign")]))
    model.code.append({"content": FIXED, "explanation": "plus, not minus"})
    async with DuckLM.open(settings) as duck:
        paused = await duck.run("Fix the bug in calc.py", thread_id="c", critic=False, memory=False)
    assert paused.status == "interrupted", paused.events
    await _rewrite_in_old_shape(settings, "c")
    model.actions.append(reply("Fixed."))
    async with DuckLM.open(settings) as duck:
        events = [e async for e in duck.resume("c", [{"type": "approve"}])]
    assert events[-1]["status"] == "completed", events
    (finished,) = [e for e in events if e["type"] == "tool_call_finished"]
    assert finished["status"] == "success"
    assert await asyncio.to_thread(target.read_text) == FIXED
    assert not model.code, "the resume wrote the checkpointed proposal"


async def _pause_in_a_plan_step(settings: Settings, model: RoleScript) -> None:
    """A two-step plan paused at step 2's approval (overwriting the file step 1 made)."""
    model.plans.append(json.dumps(TWO_STEPS))
    model.actions.extend([
        reply(tool_calls=[call("file_write", path="notes.txt", content="one")]),
        reply("Created notes.txt."),
        reply(tool_calls=[call("file_write", path="notes.txt", content="two", overwrite=True)]),
    ])  # fmt: skip
    async with DuckLM.open(settings) as duck:
        paused = await duck.run(
            "First create notes.txt, then replace its text.",
            thread_id="p",
            critic=False,
            memory=False,
        )
    assert paused.status == "interrupted", paused.events


async def _rewrite_in_old_shape(settings: Settings, thread_id: str) -> None:
    """Put the thread's latest checkpoint back with the dicts the untyped code wrote."""
    async with open_checkpointer(settings.checkpoint_location) as saver:
        config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        latest = await saver.aget_tuple(config)
        assert latest is not None and latest.parent_config is not None
        values = latest.checkpoint["channel_values"]
        assert isinstance(values["route"], Route), "written typed before the rewrite"
        values["route"] = values["route"].event_fields()
        if values.get("plan") is not None:
            values["plan"] = values["plan"].model_dump(mode="json")
        values["code_proposals"] = {
            call_id: proposal.model_dump(mode="json", exclude_none=True)
            if isinstance(proposal, CoderFailure)
            else proposal.model_dump(mode="json")
            for call_id, proposal in values.get("code_proposals", {}).items()
        }
        # Same checkpoint id: the interrupt's pending writes stay attached to it.
        await saver.aput(latest.parent_config, latest.checkpoint, latest.metadata, {})
        again = await saver.aget_tuple(config)
    assert again is not None and isinstance(again.checkpoint["channel_values"]["route"], dict)
