"""Step limit, model server down, malformed replies, and a critic that fails."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from tests.support.scripted_llm import ScriptedLLM, call, reply


async def test_step_limit_ends_the_tool_loop(duck: DuckLM, llm: ScriptedLLM) -> None:
    # Distinct calls: an identical one is answered from the first and ends the loop itself
    # (`ducklm/turn/tool_step/repeats.py`).
    limit = duck.settings.max_action_steps
    llm.script(*[reply(tool_calls=[call("list_dir", path=f"d{i}")]) for i in range(limit)])
    llm.script(reply("I looked around enough."))
    result = await duck.run("look around forever", critic=False, memory=False)

    assert result.status == "completed"
    assert result.answer == "I looked around enough."
    calls = [e for e in result.events if e["type"] == "tool_call_finished"]
    assert len(calls) == limit
    assert len(llm.requests) == limit + 1
    thinker_system = llm.requests[-1]["messages"][0]["content"]
    assert f"step limit ({limit}) was reached" in thinker_system
    assert "tools" not in llm.requests[-1], "the thinker is not offered tools"


async def test_model_server_down_fails_the_run_clearly(
    settings: Settings, unused_tcp_port: int
) -> None:
    down = settings.model_copy(update={"llm_base_url": f"http://127.0.0.1:{unused_tcp_port}/v1"})
    async with DuckLM.open(down) as duck:
        result = await duck.run("hello", critic=False, memory=False)
        assert result.status == "failed"
        (error,) = [e for e in result.events if e["type"] == "error"]
        assert error["message"].startswith("The model server is not reachable")
        assert "Traceback" not in json.dumps(result.events)
        assert "Errno" not in error["message"]
        runs = await duck.runs(result.thread_id)
        assert [r.status for r in runs] == ["failed"]


async def test_server_errors_are_retried_then_succeed(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.script(reply(status=503), reply(status=500), reply("Recovered."))
    result = await duck.run("hello", critic=False, memory=False)
    assert result.status == "completed"
    assert result.answer == "Recovered."
    assert len(llm.requests) == 3


async def test_malformed_reply_is_retried_then_fails(duck: DuckLM, llm: ScriptedLLM) -> None:
    attempts = duck.settings.model_retry_attempts
    llm.script(*[reply(raw_body="data: {not json\n\n") for _ in range(attempts)])
    result = await duck.run("hello", critic=False, memory=False)
    assert result.status == "failed"
    assert len(llm.requests) == attempts
    error = next(e for e in result.events if e["type"] == "error")
    assert error["message"] == "The model server sent a reply DuckLM could not read."


async def test_a_failing_critic_never_loses_the_answer(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.script(reply("Here is your answer."), reply("this is not json"), reply(status=500))
    result = await duck.run("what do ducks eat?")
    assert result.status == "completed"
    assert result.answer == "Here is your answer."
    reviewed = await duck.reviewed(result.thread_id)  # the reviewers run behind the answer
    failures = [(e["type"], e["stage"]) for e in reviewed if "stage" in e]
    assert failures == [("error", "critic"), ("memory_policy_failed", "memory_policy")]
    assert all(e["fatal"] is False for e in reviewed if "stage" in e)
    assert reviewed[-1]["type"] == "review_finished"
    messages = await duck.messages(result.thread_id)
    assert messages[-1].text == "Here is your answer."


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under `root` with its content."""
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


async def test_critic_output_lands_as_experience_and_a_proposal(
    duck: DuckLM, llm: ScriptedLLM, skills_dir: Path
) -> None:
    skills_before = await asyncio.to_thread(tree_bytes, skills_dir)
    reflection = {
        "score": 0.9,
        "summary": "answered directly",
        "what_worked": ["a one-line answer"],
        "what_failed": [],
        "reusable_lesson": "answer fact questions in one line",
        "suggested_skill_patch": "For fact questions, answer in one line.",
        "confidence": 0.8,
    }
    llm.script(
        reply("Paris."),
        reply(json.dumps(reflection)),
        reply(json.dumps({"should_store": False})),
    )
    result = await duck.run("capital of France?")
    assert result.status == "completed"
    reviewed = await duck.reviewed(result.thread_id)
    (event,) = [e for e in reviewed if e["type"] == "reflection_completed"]
    assert event["score"] == pytest.approx(0.9)
    (record,) = await duck.context.experience.list(thread_id=result.thread_id)
    assert record.lesson == "answer fact questions in one line"
    assert record.what_worked == ["a one-line answer"]
    assert record.proposal_id == event["proposal_id"]
    # Model-written output lands in the data dir, owner-only; the skills folder (in a
    # wheel install, site-packages) is never written at run time.
    proposal = duck.context.settings.files.skill_proposals / f"{record.proposal_id}.yaml"
    text = await asyncio.to_thread(proposal.read_text)
    assert "For fact questions, answer in one line." in text
    assert stat.S_IMODE((await asyncio.to_thread(proposal.stat)).st_mode) == 0o600
    assert await asyncio.to_thread(tree_bytes, skills_dir) == skills_before
    state = await duck.state(result.thread_id)
    assert state is not None
    assert state.critique is not None and state.critique["score"] == 0.9
    assert state.memory_decisions[0]["action"] == "skip"
    critic_request = llm.requests[1]
    assert critic_request["response_format"]["type"] == "json_schema"
    assert "Paris." in critic_request["messages"][-1]["content"]


async def test_a_reviewer_that_keeps_failing_is_shown_once_with_why(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    # Each reviewer asks once more before its failure counts: two bad replies each.
    bad_critic, bad_policy = [reply("not json")] * 2, [reply('{"should_store": "maybe"}')] * 2
    llm.script(
        *[reply("Answer one."), *bad_critic, *bad_policy],
        *[reply("Answer two."), *bad_critic, *bad_policy],
    )
    first = await duck.run("what do ducks eat?", thread_id="t")
    first_review = await duck.reviewed("t")
    second = await duck.run("and geese?", thread_id="t")
    second_review = await duck.reviewed("t")
    assert (first.status, second.status) == ("completed", "completed")
    shown = [e for e in first_review if "stage" in e]
    assert [(e["stage"], e["fatal"]) for e in shown] == [
        ("critic", False),
        ("memory_policy", False),
    ]
    assert "Why: the reply is not valid JSON" in shown[0]["message"]
    assert "should_store" in shown[1]["message"]
    # The same failures on the next turn of the conversation are only logged.
    assert not [e for e in second_review if "stage" in e]
    assert second_review[0]["type"] == "review_started"
    assert second.answer == "Answer two."


async def test_a_score_out_of_ten_is_read_on_the_unit_scale(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.script(
        reply("Ducks eat plants."),
        reply('{"score": 8, "summary": "Right."}'),
        reply('{"should_store": false}'),
    )
    result = await duck.run("what do ducks eat?")
    reviewed = await duck.reviewed(result.thread_id)
    (reflection,) = [e for e in reviewed if e["type"] == "reflection_completed"]
    assert reflection["score"] == 0.8
