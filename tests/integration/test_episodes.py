"""Episodes through the whole graph: what was said in one conversation is found from
another with the date it was said, with no memory-policy record; by recall, by the
`search_conversations` tool, within a time asked about; deleted with its conversation;
rebuilt by a reindex."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime
from typing import Any

import pytest

from ducklm.config.settings import Settings
from ducklm.memory import MemoryStore
from ducklm.memory.episodes import WRITE_DELAY_S
from ducklm.memory.table import MemoryTable
from ducklm.runtime.facade import DuckLM
from ducklm.stores import open_database
from tests.support.scripted_llm import Reply, ScriptedLLM, call, reply

DAY = 86_400.0


class Roles:
    """Reviewers say nothing worth keeping; the action role answers from a queue."""

    def __init__(self) -> None:
        self.action: list[Reply] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema == "Critique":
            return reply(json.dumps({"score": 0.8, "summary": "fine"}))
        if schema == "MemoryProposal":
            return reply(json.dumps({"should_store": False}))  # the policy keeps nothing
        if schema == "RecallPick":
            return reply(json.dumps({"relevant": [1]}))
        return self.action.pop(0) if self.action else reply("OK.")


@pytest.fixture
def roles(llm: ScriptedLLM) -> Roles:
    script = Roles()
    llm.set_responder(script)
    return script


def episodes(duck: DuckLM) -> MemoryStore:
    assert duck.context.episodes is not None
    return duck.context.episodes


def day_of(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).date().isoformat()


async def say(duck: DuckLM, message: str, thread: str, *, at: float | None = None) -> None:
    """One turn, its episodes written at `at` (the writer's clock), and waited for."""
    writer = duck.episode_writer
    assert writer is not None
    writer.clock = (lambda: at) if at is not None else time.time
    result = await duck.run(message, thread_id=thread)
    assert result.status == "completed"
    await writer.idle()
    writer.clock = time.time


def tool_results(llm: ScriptedLLM) -> list[dict[str, Any]]:
    """Tool messages the model was sent, in order (each request repeats the earlier ones)."""
    return [m for r in llm.requests for m in r["messages"] if m["role"] == "tool"]


def action_systems(llm: ScriptedLLM) -> list[str]:
    return [r["messages"][0]["content"] for r in llm.requests if "tools" in r]


async def test_said_three_days_ago_in_a_is_recalled_in_b_with_its_date(
    duck: DuckLM, llm: ScriptedLLM, roles: Roles
) -> None:
    three_days_ago = time.time() - 3 * DAY
    told = "My sister Ana started a new job at the Porto aquarium."
    await say(duck, told, "a", at=three_days_ago)
    assert duck.context.memory is not None
    assert await duck.context.memory.list() == []  # no memory-policy record involved

    await say(duck, "Where does my sister Ana work now?", "b")

    state = await duck.state("b")
    assert state is not None
    (said,) = [m for m in state.recalled if m.get("kind") == "episode"]
    assert said["text"] == "My sister Ana started a new job at the Porto aquarium."
    assert said["speaker"] == "user"
    assert said["conversation"] == "a"
    assert day_of(said["said_at"]) == day_of(three_days_ago)
    system = action_systems(llm)[-1]
    assert (
        f"The user said on {day_of(three_days_ago)}, in another conversation: "
        "My sister Ana started a new job at the Porto aquarium." in system
    )
    # b's own messages are in its history, never recalled as episodes of b
    assert all(m.get("conversation") != "b" for m in state.recalled)


async def test_the_answer_is_an_episode_too_and_tool_steps_are_not(
    duck: DuckLM, roles: Roles
) -> None:
    roles.action = [reply(tool_calls=[call("list_dir", path=".")]), reply("Nothing here yet.")]
    await say(duck, "What is in my workspace?", "a")
    stored = await episodes(duck).list(limit=1000)
    assert sorted((e.memory_type, e.text) for e in stored) == [
        ("assistant", "Nothing here yet."),
        ("user", "What is in my workspace?"),
    ]
    assert {e.scope for e in stored} == {"workspace"}
    # a second turn indexes only its own messages, never the first turn's again
    await say(duck, "Thanks.", "a")
    assert len(await episodes(duck).list(limit=1000)) == 4


async def test_search_conversations_finds_what_was_said_within_dates(
    duck: DuckLM, llm: ScriptedLLM, roles: Roles
) -> None:
    now = time.time()
    await say(duck, "The plumber Marek fixed the boiler on Friday.", "old", at=now - 40 * DAY)
    await say(duck, "Marek the plumber will come back for the radiator.", "new", at=now - 2 * DAY)
    since = day_of(now - 10 * DAY)
    roles.action = [
        reply(tool_calls=[call("search_conversations", query="Marek plumber", since=since)]),
        reply("He is coming back for the radiator."),
    ]
    await say(duck, "What did we say about the plumber lately?", "c")

    found = tool_results(llm)[-1]
    assert "Marek the plumber will come back for the radiator." in found["content"]
    assert f"[{day_of(now - 2 * DAY)}] user (conversation new)" in found["content"]
    assert "boiler" not in found["content"]  # said 40 days ago: outside `since`


async def test_search_conversations_names_a_bad_date(
    duck: DuckLM, llm: ScriptedLLM, roles: Roles
) -> None:
    await say(duck, "The plumber Marek fixed the boiler.", "old")
    roles.action = [
        reply(tool_calls=[call("search_conversations", query="plumber", since="the blue moon")]),
        reply("I could not read that date."),
    ]
    await say(duck, "What did the plumber do?", "c")
    result = tool_results(llm)[-1]
    assert "since: 'the blue moon' is not a date" in result["content"]


async def test_a_time_asked_about_keeps_what_was_said_then(
    duck: DuckLM, llm: ScriptedLLM, roles: Roles
) -> None:
    now = time.time()
    await say(duck, "We talked about the trip to Vienna by train.", "x", at=now - 60 * DAY)
    await say(duck, "We talked about the trip to Krakow by train.", "y", at=now - 3 * DAY)
    await say(duck, "What trip by train did we talk about 3 days ago?", "z")
    state = await duck.state("z")
    assert state is not None
    texts = [m["text"] for m in state.recalled if m.get("kind") == "episode"]
    assert texts == ["We talked about the trip to Krakow by train."]


async def test_forgetting_a_conversation_forgets_its_episodes(duck: DuckLM, roles: Roles) -> None:
    await say(duck, "My bike is a green Brompton.", "a")
    await say(duck, "My car is a red Fiat.", "b")
    await duck.forget_thread("a")
    left = await episodes(duck).list(limit=1000)
    assert {e.conversation_id for e in left} == {"b"}
    workspace = str(duck.settings.workspace)
    found = await episodes(duck).search("green Brompton bike", workspace=workspace)
    assert all(h.record.conversation_id == "b" for h in found.hits)


async def test_reindex_rebuilds_episodes_from_the_conversations(duck: DuckLM, roles: Roles) -> None:
    await say(duck, "My bike is a green Brompton.", "a")
    store = episodes(duck)
    before = {e.id: e.created_at for e in await store.list(limit=1000)}
    await store.delete_conversation("a")  # as if the writer had never run
    assert await store.list(limit=1000) == []

    count = await duck.reindex_episodes()

    after = await store.list(limit=1000)
    assert count == 2
    assert {e.id for e in after} == set(before)  # the same ids: a message is one episode
    (task,) = await duck.tasks("a")
    # dated by the task the message started: the checkpoints carry no times
    assert {e.created_at for e in after} == {task.created_at}
    found = await store.search("Brompton", workspace=str(duck.settings.workspace))
    assert found.hits and found.hits[0].record.text == "My bike is a green Brompton."


async def test_episodes_switched_off_records_nothing(settings: Settings, roles: Roles) -> None:
    async with DuckLM.open(settings.model_copy(update={"episodes": False})) as duck:
        assert duck.context.episodes is None
        assert duck.episode_writer is None
        result = await duck.run("My bike is a green Brompton.", thread_id="a")
        assert result.status == "completed"
    async with open_database(settings.database_location) as db:
        assert await MemoryTable(db, "episodes").count() == 0


async def test_episodes_wait_for_a_quiet_moment(duck: DuckLM, roles: Roles) -> None:
    writer = duck.episode_writer
    assert writer is not None
    await say(duck, "The heron came back to the pond.", "a")
    assert len(await episodes(duck).list(limit=1000)) == 2
    # While another run goes on, the ended turn's episodes wait for it to end.
    with writer.hold():
        result = await duck.run("The ducks swam all morning.", thread_id="b")
        assert result.status == "completed"
        quiet = asyncio.create_task(writer.idle())
        await asyncio.sleep(3 * WRITE_DELAY_S)
        assert not quiet.done()
        assert len(await episodes(duck).list(limit=1000)) == 2
    await asyncio.wait_for(quiet, 10 * WRITE_DELAY_S)
    assert len(await episodes(duck).list(limit=1000)) == 4
