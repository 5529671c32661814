"""Approvals as interrupts: every decision, bad decisions, and rules that persist."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM, NotWaitingError
from ducklm.tools.hitl import DecisionError
from tests.support.scripted_llm import ScriptedLLM, call, reply

OVERWRITE = call("file_write", path="a.txt", content="new", overwrite=True)


async def _read(path: Path) -> str:
    return await asyncio.to_thread(path.read_text)


@pytest.fixture
async def existing(workspace: Path) -> Path:
    target = workspace / "a.txt"
    await asyncio.to_thread(target.write_text, "old")
    return target


async def _pause_at_overwrite(duck: DuckLM, llm: ScriptedLLM, thread: str) -> None:
    llm.script(reply(tool_calls=[OVERWRITE]))
    result = await duck.run("overwrite a.txt", thread_id=thread, critic=False, memory=False)
    assert result.status == "interrupted"
    (pending,) = result.pending
    request = pending["request"]
    (action,) = request["action_requests"]
    assert (action["name"], action["args"]) == ("file_write", OVERWRITE.args)
    # The person decides on the change itself: the diff follows the reason.
    assert action["description"].rstrip() == (
        "overwrite existing file a.txt:\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n"
        "-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file"
    )
    assert request["review_configs"][0]["allowed_decisions"] == [
        "approve",
        "edit",
        "reject",
        "allow_forever",
    ]


async def test_nothing_runs_before_the_decision(
    duck: DuckLM, llm: ScriptedLLM, existing: Path
) -> None:
    await _pause_at_overwrite(duck, llm, "t1")
    assert await _read(existing) == "old"
    _, request = await duck.pending_request("t1")
    assert request["action_requests"][0]["name"] == "file_write"


async def test_approve_runs_the_call(duck: DuckLM, llm: ScriptedLLM, existing: Path) -> None:
    await _pause_at_overwrite(duck, llm, "t1")
    llm.script(reply("Overwritten."))
    result = await duck.resume_run("t1", [{"type": "approve"}], critic=False, memory=False)
    assert result.status == "completed"
    assert result.answer == "Overwritten."
    assert await _read(existing) == "new"
    finished = next(e for e in result.events if e["type"] == "tool_call_finished")
    assert finished["decision"] == "approve"
    assert finished["status"] == "success"


async def test_edit_runs_the_edited_call(duck: DuckLM, llm: ScriptedLLM, existing: Path) -> None:
    await _pause_at_overwrite(duck, llm, "t1")
    llm.script(reply("Written with your text."))
    edited = {"path": "a.txt", "content": "edited", "overwrite": True}
    result = await duck.resume_run(
        "t1", [{"type": "edit", "edited_action": {"name": "file_write", "args": edited}}]
    )
    assert result.status == "completed"
    assert await _read(existing) == "edited"


async def test_reject_becomes_an_error_the_model_sees(
    duck: DuckLM, llm: ScriptedLLM, existing: Path
) -> None:
    await _pause_at_overwrite(duck, llm, "t1")
    llm.script(reply("I left a.txt as it was."))
    result = await duck.resume_run(
        "t1", [{"type": "reject", "message": "keep the old text"}], critic=False, memory=False
    )
    assert result.status == "completed"
    assert await _read(existing) == "old"
    tool_message = llm.requests[-1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"] == "the user rejected this call: keep the old text"


async def test_allow_forever_is_remembered_across_restarts(
    settings: Settings, llm: ScriptedLLM, existing: Path
) -> None:
    async with DuckLM.open(settings) as duck:
        await _pause_at_overwrite(duck, llm, "t1")
        llm.script(reply("Done."))
        result = await duck.resume_run(
            "t1", [{"type": "allow_forever"}], critic=False, memory=False
        )
        assert result.status == "completed"
        (rule,) = await duck.approval_rules()
        assert (rule.tool, rule.pattern) == ("file_write", "overwrite:a.txt")

    async with DuckLM.open(settings) as duck:  # a new process would see the same tables
        llm.script(reply(tool_calls=[OVERWRITE]), reply("Done again."))
        result = await duck.run("overwrite a.txt again", critic=False, memory=False)
        assert result.status == "completed", "the rule should have answered the question"
        assert not result.pending
        # The rule is for exactly that action: another file still asks.
        other = call("file_write", path="b.txt", content="x", overwrite=True)
        await asyncio.to_thread((existing.parent / "b.txt").write_text, "b")
        llm.script(reply(tool_calls=[other]))
        result = await duck.run("overwrite b.txt", critic=False, memory=False)
        assert result.status == "interrupted"

        assert await duck.revoke_rule(rule.id)
        assert await duck.approval_rules() == []
        assert not await duck.revoke_rule(rule.id)


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        ([], "1 decision(s) expected, got 0"),
        ([{"type": "approve"}, {"type": "approve"}], "1 decision(s) expected, got 2"),
        ([{"type": "maybe"}], "type 'maybe' is not one of"),
        ([{"type": "edit"}], "edit needs edited_action"),
        (
            [{"type": "edit", "edited_action": {"name": "file_read", "args": {}}}],
            "an edit cannot change the tool",
        ),
    ],
)
async def test_bad_decisions_are_refused_and_lose_nothing(
    duck: DuckLM, llm: ScriptedLLM, existing: Path, decisions: list[dict[str, object]], message: str
) -> None:
    await _pause_at_overwrite(duck, llm, "t1")
    with pytest.raises(DecisionError, match=re.escape(message)):
        await duck.resume_run("t1", decisions)
    # Still waiting, file untouched: a good decision afterwards works.
    llm.script(reply("Overwritten."))
    result = await duck.resume_run("t1", [{"type": "approve"}], critic=False, memory=False)
    assert result.status == "completed"
    assert await _read(existing) == "new"


async def test_resume_of_a_thread_that_is_not_waiting(duck: DuckLM, llm: ScriptedLLM) -> None:
    with pytest.raises(NotWaitingError):
        await duck.resume_run("nobody", [{"type": "approve"}])
    llm.script(reply("Hi."))
    await duck.run("hello", thread_id="t2", critic=False, memory=False)
    with pytest.raises(NotWaitingError, match="not waiting"):
        await duck.resume_run("t2", [{"type": "approve"}])


async def test_resume_can_switch_the_critic_off(
    duck: DuckLM, llm: ScriptedLLM, existing: Path
) -> None:
    llm.script(reply(tool_calls=[OVERWRITE]))
    paused = await duck.run("overwrite a.txt", thread_id="t3")  # critic and memory on
    assert paused.status == "interrupted"
    llm.script(reply("Overwritten."))
    result = await duck.resume_run("t3", [{"type": "approve"}], critic=False, memory=False)
    assert result.status == "completed"
    assert llm.pending == 0
    assert len(llm.requests) == 2, "no critic or memory-policy request after the answer"


@pytest.mark.parametrize("rule_id", [0, -1, 2**63, 10**23])
async def test_revoking_an_id_no_row_can_have_is_no_such_rule(duck: DuckLM, rule_id: int) -> None:
    # `ducklm approvals revoke 99999999999999999999999` overflowed SQLite's integer.
    assert await duck.revoke_rule(rule_id) is False
