"""Memory through the whole graph: remember, recall in other words, refuse secrets,
update duplicates, supersede contradictions, degrade without Qdrant, and keep every
request within the token budget on long histories (the summary takes over)."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import pytest

from ducklm.config.settings import Settings
from ducklm.models.tokens import estimate_tokens
from ducklm.runtime.facade import DuckLM
from tests.support.scripted_llm import Reply, ScriptedLLM, reply


class Roles:
    """Answers each role: the action role from a queue, the reviewers by schema name."""

    def __init__(self) -> None:
        self.answers: deque[str] = deque()
        self.memory: deque[dict[str, Any]] = deque()
        self.summaries = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema == "Critique":
            return reply(json.dumps({"score": 0.8, "summary": "fine"}))
        if schema == "MemoryProposal":
            proposal = self.memory.popleft() if self.memory else {"should_store": False}
            return reply(json.dumps(proposal))
        if schema == "RecallPick":
            return reply(json.dumps({"relevant": [1, 2]}))
        if body["messages"][0]["content"].startswith("You are the summarizer"):
            self.summaries += 1
            return reply("The user and DuckLM talked about ducks; nothing is pending.")
        return reply(self.answers.popleft() if self.answers else "OK.")


@pytest.fixture
def roles(llm: ScriptedLLM) -> Roles:
    script = Roles()
    llm.set_responder(script)
    return script


def fact(text: str, importance: float = 0.8, scope: str = "global") -> dict[str, Any]:
    return {"should_store": True, "text": text, "scope": scope, "importance": importance}


def action_systems(llm: ScriptedLLM) -> list[str]:
    return [r["messages"][0]["content"] for r in llm.requests if "tools" in r]


async def test_a_fact_told_once_is_recalled_in_a_new_conversation(
    duck: DuckLM, llm: ScriptedLLM, roles: Roles
) -> None:
    # Asked in so many words: the rule keeps it, the memory policy's model is not asked.
    await duck.run("Remember: my sister Ana lives in Porto.", thread_id="a")
    # The memory policy runs behind the answer; conversation b does not wait for a's.
    (stored,) = [e for e in await duck.reviewed("a") if e["type"] == "memory_stored"]
    assert stored["scope"] == "global"

    asked = await duck.run("Which city is Ana's home?", thread_id="b")
    assert asked.status == "completed"
    state = await duck.state("b")
    assert state is not None
    assert [m["text"] for m in state.recalled] == ["My sister Ana lives in Porto."]
    assert "Ana lives in Porto" in action_systems(llm)[-1]
    assert not any("MemoryProposal" in json.dumps(r) for r in llm.requests)


async def test_secrets_are_refused_and_not_repeated(duck: DuckLM, roles: Roles) -> None:
    roles.memory.append(fact("The user's wifi password is duckpond-1234"))
    result = await duck.run("my wifi password is duckpond-1234, keep it")
    reviewed = await duck.reviewed(result.thread_id)
    (decision,) = [e for e in reviewed if e["type"] == "memory_policy_decision"]
    assert decision["action"] == "skip"
    assert decision["reason"].startswith("refused")
    assert decision["text"] == ""
    assert await duck.context.memory.list() == []  # type: ignore[union-attr]


async def test_a_duplicate_updates_and_a_contradiction_supersedes(
    duck: DuckLM, roles: Roles
) -> None:
    roles.memory.extend(
        [
            fact("My sister Ana lives in Porto"),
            fact("My sister Ana lives in Porto."),
            fact("My sister Ana lives in Lisbon"),
        ]
    )
    actions = []
    for message in ("Ana lives in Porto", "Again: Ana lives in Porto", "Ana moved to Lisbon"):
        result = await duck.run(message)
        reviewed = await duck.reviewed(result.thread_id)
        (decision,) = [e for e in reviewed if e["type"] == "memory_policy_decision"]
        actions.append(decision["action"])
    assert actions == ["store", "update", "supersede"]
    memory = duck.context.memory
    assert memory is not None
    (current,) = await memory.list()
    assert current.text == "My sister Ana lives in Lisbon"
    everything = await memory.list(include_superseded=True)
    assert len(everything) == 2
    found = await memory.search("Where does Ana live?")
    assert [h.record.text for h in found.hits] == ["My sister Ana lives in Lisbon"]


@pytest.fixture
async def no_qdrant(
    settings: Settings, llm: ScriptedLLM, unused_tcp_port: int
) -> AsyncIterator[DuckLM]:
    down = settings.model_copy(update={"qdrant_url": f"http://127.0.0.1:{unused_tcp_port}"})
    async with DuckLM.open(down) as duck:
        yield duck


async def test_without_qdrant_recall_degrades_to_keywords(
    no_qdrant: DuckLM, llm: ScriptedLLM, roles: Roles
) -> None:
    await no_qdrant.run("Remember: Ana lives in Porto.", thread_id="a")  # kept by rule
    await no_qdrant.reviewed("a")
    result = await no_qdrant.run("Where does Ana live?", thread_id="b")
    assert result.status == "completed"
    warnings = [e for e in result.events if e.get("stage") == "recall"]
    assert warnings and warnings[0]["fatal"] is False
    state = await no_qdrant.state("b")
    assert state is not None
    assert [m["text"] for m in state.recalled] == ["Ana lives in Porto."]


@pytest.fixture
async def small_budget(settings: Settings, llm: ScriptedLLM) -> AsyncIterator[DuckLM]:
    # Tight, with room for the tools' schemas (about 1,450 estimated tokens for six).
    tight = settings.model_copy(
        update={"ctx_size": 2560, "max_input_tokens": 1900, "max_tool_output_chars": 2000}
    )
    async with DuckLM.open(tight) as duck:
        yield duck


async def test_long_histories_stay_within_budget(
    small_budget: DuckLM, llm: ScriptedLLM, roles: Roles
) -> None:
    paragraph = "Ducks paddle across the pond while the heron waits by the reeds. " * 12
    for turn in range(14):
        roles.answers.append(f"Answer {turn}: " + paragraph)
        result = await small_budget.run(f"Question {turn}: {paragraph}", thread_id="long")
        assert result.status == "completed"
    limit = small_budget.settings.max_input_tokens
    for request in llm.requests:
        text = " ".join(str(m.get("content") or "") for m in request["messages"])
        assert estimate_tokens(text) <= limit
    assert roles.summaries >= 1, "older history was folded into the summary"
    state = await small_budget.state("long")
    assert state is not None
    assert state.summary.startswith("The user and DuckLM talked about ducks")
    assert state.summary_covers > 0
    last_action = [r for r in llm.requests if "tools" in r][-1]
    assert "Question 13" in last_action["messages"][-1]["content"]
    assert all("Question 0:" not in str(m.get("content")) for m in last_action["messages"][1:])
