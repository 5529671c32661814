"""The answer first: `done` comes with the answer, the critic and memory policy behind it.

Through the whole graph on the scripted server: the review's model calls come after
`done`, in a review run of their own; a message or a revert on the thread during a
review starts at once, and the review is deferred and runs after it, judging its own
turn; a person may skip it; a review stopped by closing DuckLM, or by its process dying,
is recorded as skipped and leaves the turn's answer and task alone; with `review_behind`
off the turn reviews itself before `done`, as a graph served without the runner does.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM, NotWaitingError
from ducklm.runtime.operator import open_operator_stores
from ducklm.runtime.recovery import INTERRUPTED_BY_RESTART
from ducklm.runtime.reviews import (
    DEFERRED_FOR_EARLIER,
    DEFERRED_FOR_MESSAGE,
    DEFERRED_FOR_REVERT,
    SKIPPED_BY_PERSON,
)
from ducklm.runtime.runner import REVIEW_STOPPED
from ducklm.stores import Runs
from ducklm.stores.owner import ProcessOwner
from tests.support.scripted_llm import Reply, ScriptedLLM, call, reply

CRITIQUE = {"score": 0.8, "summary": "answered the question"}


class Reviewers:
    """Answers the turn's roles at once and the reviewers after `review_delay_s`."""

    def __init__(self) -> None:
        self.review_delay_s = 0.0
        self.order: list[str] = []
        self.critic_asked = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Reply:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema == "Critique":
            self.order.append("critic")
            self.critic_asked.set()
            return reply(json.dumps(CRITIQUE), delay_s=self.review_delay_s)
        if schema == "MemoryProposal":
            self.order.append("memory")
            return reply(json.dumps({"should_store": False}), delay_s=self.review_delay_s)
        last = body["messages"][-1]
        if last["role"] == "tool":
            return reply("Made it.")
        self.order.append(f"turn: {last['content']}")
        if last["content"] == WRITE:
            return reply(tool_calls=[call("shell_exec", command="echo hi > new.txt")])
        return reply(f"An answer to {last['content']}")


@pytest.fixture
def reviewers(llm: ScriptedLLM) -> Reviewers:
    script = Reviewers()
    llm.set_responder(script)
    return script


def kinds(llm: ScriptedLLM) -> list[str]:
    names = [
        ((r.get("response_format") or {}).get("json_schema") or {}).get("name")
        for r in llm.requests
    ]
    return [n or "turn" for n in names]


# "Explain" keeps the router's critic on (it leaves chit-chat unreviewed).
QUESTION = "Explain what a duck is."
WRITE = "Write hi into new.txt."


async def test_done_comes_before_the_review_which_runs_as_its_own_run(
    duck: DuckLM, llm: ScriptedLLM, reviewers: Reviewers
) -> None:
    reviewers.review_delay_s = 0.3
    result = await duck.run(QUESTION, thread_id="t")

    assert result.status == "completed"
    assert result.answer == f"An answer to {QUESTION}"
    assert "reflection_completed" not in [e["type"] for e in result.events]
    # Nothing ran between `done` and here: no reviewer has been asked yet.
    assert set(kinds(llm)) == {"turn"}

    review = await duck.reviewed("t")
    types = [e["type"] for e in review]
    assert types[0] == "review_started"
    assert "reflection_completed" in types
    assert types[-1] == "review_finished" and review[-1]["status"] == "completed"
    assert {e["task_id"] for e in review} == {result.task_id}
    turn, behind = await duck.runs("t")
    assert (turn.kind, turn.status) == ("turn", "completed")
    assert (behind.kind, behind.status) == ("review", "completed")
    assert {e["run_id"] for e in review} == {behind.run_id}
    task = await duck.task(result.task_id)
    assert task is not None and (task.status, task.answer) == ("completed", result.answer)
    state = await duck.state("t")
    assert state is not None and state.critique is not None and not state.review_due


async def review_events(duck: DuckLM, thread_id: str, run_id: str) -> list[dict[str, Any]]:
    return [r.data for r in await duck.events(thread_id) if r.run_id == run_id]


async def test_a_message_during_a_review_starts_at_once_and_the_review_runs_after(
    duck: DuckLM, llm: ScriptedLLM, reviewers: Reviewers
) -> None:
    reviewers.review_delay_s = 1.0
    await duck.run(QUESTION, thread_id="t")
    assert await asyncio.to_thread(reviewers.critic_asked.wait, 30)
    assert duck.review_state("t") == "reviewing"

    second = await duck.run("Explain what a goose is.", thread_id="t")
    assert second.status == "completed"
    await duck.reviewed("t")

    # The second turn went to the model while the first review's critic was still out;
    # that review ran again after it, then the second turn's own.
    goose = "turn: Explain what a goose is."
    assert reviewers.order == [f"turn: {QUESTION}", "critic", goose, *["critic", "memory"] * 2]
    first_review, second_review = [r for r in await duck.runs("t") if r.kind == "review"]
    assert (first_review.status, second_review.status) == ("completed", "completed")
    types = [
        (e["type"], e.get("reason")) for e in await review_events(duck, "t", first_review.run_id)
    ]
    assert types[:3] == [
        ("review_started", None),
        ("review_deferred", DEFERRED_FOR_MESSAGE.reason),
        ("review_started", None),
    ]
    assert types[-1] == ("review_finished", None)
    later = await review_events(duck, "t", second_review.run_id)
    assert (
        later[0]["type"] == "review_deferred" and later[0]["reason"] == DEFERRED_FOR_EARLIER.reason
    )
    # Each review judged its own turn: the first one's critic saw the duck, not the goose.
    critics = [r for r in llm.requests if "Critique" in json.dumps(r.get("response_format"))]
    assert "goose" not in json.dumps(critics[1]["messages"])
    assert "goose" in json.dumps(critics[2]["messages"])
    state = await duck.state("t")
    assert state is not None and state.critique is not None and not state.review_due


async def test_a_revert_during_a_review_goes_ahead_and_the_review_runs_after(
    duck: DuckLM, reviewers: Reviewers, workspace: Path
) -> None:
    reviewers.review_delay_s = 1.0
    written = await duck.run(WRITE, thread_id="t")
    assert written.status == "completed", written.events
    assert await asyncio.to_thread((workspace / "new.txt").exists)
    assert await asyncio.to_thread(reviewers.critic_asked.wait, 30)

    undone = await duck.undo("t")

    assert undone.summary()["files"] == [{"path": "new.txt", "action": "removed"}]
    assert not await asyncio.to_thread((workspace / "new.txt").exists)
    await duck.reviewed("t")
    (review,) = [r for r in await duck.runs("t") if r.kind == "review"]
    assert review.status == "completed"
    reasons = [e.get("reason") for e in await review_events(duck, "t", review.run_id)]
    assert DEFERRED_FOR_REVERT.reason in reasons


async def test_a_skipped_review_is_recorded_as_skipped_by_the_person(
    duck: DuckLM, reviewers: Reviewers
) -> None:
    reviewers.review_delay_s = 5.0
    result = await duck.run(QUESTION, thread_id="t")
    assert await asyncio.to_thread(reviewers.critic_asked.wait, 30)

    assert await duck.skip_review("t") == 1

    assert duck.review_state("t") == "idle"
    _, review = await duck.runs("t")
    assert (review.kind, review.status, review.error) == ("review", "cancelled", SKIPPED_BY_PERSON)
    closing = (await duck.events("t"))[-1]
    assert (closing.type, closing.data["reason"]) == ("review_skipped", SKIPPED_BY_PERSON)
    task = await duck.task(result.task_id)
    assert task is not None and (task.status, task.answer) == ("completed", result.answer)
    assert await duck.skip_review("t") == 0


async def test_a_review_stopped_by_closing_is_recorded_as_skipped(
    settings: Settings, llm: ScriptedLLM, reviewers: Reviewers
) -> None:
    reviewers.review_delay_s = 5.0
    async with DuckLM.open(settings) as duck:
        result = await duck.run(QUESTION, thread_id="t")
        # Closed while the review waits for its model.
        assert await asyncio.to_thread(reviewers.critic_asked.wait, 30)
        assert duck.reviews.pending("t")
    async with DuckLM.open(settings) as duck:
        _, behind = await duck.runs("t")
        assert (behind.kind, behind.status, behind.error) == ("review", "cancelled", REVIEW_STOPPED)
        closing = (await duck.events("t"))[-1]
        assert (closing.type, closing.data["reason"]) == ("review_skipped", REVIEW_STOPPED)
        task = await duck.task(result.task_id)
        assert task is not None and (task.status, task.answer) == ("completed", result.answer)
        with pytest.raises(NotWaitingError, match="no unfinished run"):
            await duck.check_unfinished("t")
        # The conversation goes on as usual.
        reviewers.review_delay_s = 0.0
        after = await duck.run("Explain what a goose is.", thread_id="t")
        assert after.status == "completed"


async def test_a_dead_processs_review_is_skipped_and_its_task_keeps_its_answer(
    duck: DuckLM, settings: Settings, reviewers: Reviewers
) -> None:
    result = await duck.run(QUESTION, thread_id="t", critic=False, memory=False)
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await proc.wait()
    me = await asyncio.to_thread(ProcessOwner.current)
    dead = ProcessOwner(me.host, me.boot_id, proc.pid, 1)
    await Runs(duck.database, owner=dead).start("review-1", "t", result.task_id, kind="review")

    async with open_operator_stores(settings):  # what a second process runs at start
        pass

    (_, review) = await duck.runs("t")
    assert (review.kind, review.status, review.error) == (
        "review",
        "interrupted",
        INTERRUPTED_BY_RESTART,
    )
    closing = (await duck.events("t"))[-1]
    assert (closing.type, closing.data["reason"]) == ("review_skipped", INTERRUPTED_BY_RESTART)
    task = await duck.task(result.task_id)
    assert task is not None and (task.status, task.answer) == ("completed", result.answer)


async def test_without_review_behind_the_turn_reviews_itself_before_done(
    settings: Settings, llm: ScriptedLLM, reviewers: Reviewers
) -> None:
    async with DuckLM.open(settings.model_copy(update={"review_behind": False})) as duck:
        result = await duck.run(QUESTION, thread_id="t")
        types = [e["type"] for e in result.events]
        assert types.index("reflection_completed") < types.index("done")
        assert [r.kind for r in await duck.runs("t")] == ["turn"]
        assert await duck.reviewed("t") == []


async def test_a_message_right_after_a_revert_during_a_review_starts_at_once(
    duck: DuckLM, reviewers: Reviewers, workspace: Path
) -> None:
    reviewers.review_delay_s = 1.0
    await duck.run(WRITE, thread_id="t")
    assert await asyncio.to_thread(reviewers.critic_asked.wait, 30)
    await duck.undo("t")
    await asyncio.sleep(0.2)  # the deferred review has started again
    after = await duck.run("Explain what a goose is.", thread_id="t")
    assert after.status == "completed"
    await duck.reviewed("t")
    assert [(r.kind, r.status) for r in await duck.runs("t")] == [
        ("turn", "completed"),
        ("review", "completed"),
        ("turn", "completed"),
        ("review", "completed"),
    ]
