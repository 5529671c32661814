"""Answers the rules write through real turns (issue 44): a calculation, a part or a measure
of a file, a request to remember (kept, and back in a new conversation in the person's
words), questions about DuckLM. None of them asks the model; the memory policy's model is
not asked about a fact the person asked to keep."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from tests.support.scripted_llm import Reply, ScriptedLLM, reply

MODELS = """
defaults: {{base_url: {url}, model: scripted-duck, api_key: test}}
roles:
  action: {{tool_mode: json, structured_output: json_object_schema}}
"""


@pytest.fixture
async def duck(settings: Settings, llm: ScriptedLLM, tmp_path: Path) -> AsyncIterator[DuckLM]:
    models = tmp_path / "models-json.yaml"
    await asyncio.to_thread(models.write_text, MODELS.format(url=llm.base_url))
    async with DuckLM.open(settings.model_copy(update={"models_config": models})) as runtime:
        yield runtime


def _route(events: list[Any]) -> dict[str, Any]:
    (route,) = [e for e in events if e["type"] == "route_decided"]
    return dict(route["shortcut"])


async def test_a_calculation_is_computed_not_asked(duck: DuckLM, llm: ScriptedLLM) -> None:
    result = await duck.run("what's 17 x 23?", critic=False, memory=False)
    assert result.status == "completed"
    assert result.answer == "17 \u00d7 23 = 391."
    assert llm.requests == []
    assert _route(result.events)["rule"] == "a calculation, computed"


async def test_the_part_of_a_file_asked_for_is_the_answer(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread(
        (workspace / "notes.md").write_text, "Geese honk.\nDucks nap at dawn.\nSwans glide.\n"
    )
    first = await duck.run("Print the first line of notes.md", critic=False, memory=False)
    assert first.answer == "The first line of `notes.md`: Geese honk."
    count = await duck.run("how many words are there in notes.md?", critic=False, memory=False)
    assert count.answer == "`notes.md` has 8 words."
    assert llm.requests == []


async def test_an_explicit_request_to_remember_is_kept_and_comes_back(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    def roles(body: dict[str, Any]) -> Reply:
        # The critic's review; a memory proposal here would mean the policy model was asked.
        schema = (body.get("response_format") or {}).get("json_schema") or {}
        assert schema.get("name") != "MemoryProposal"
        return reply(json.dumps({"score": 0.9, "summary": "fine"}))

    llm.set_responder(roles)
    told = await duck.run("I prefer tabs over spaces, remember that.", thread_id="a")
    assert told.answer == "Noted. I'll remember: I prefer tabs over spaces."
    reviewed = await duck.reviewed("a")
    (decision,) = [e for e in reviewed if e["type"] == "memory_policy_decision"]
    assert decision["action"] == "store"
    (stored,) = [e for e in reviewed if e["type"] == "memory_stored"]
    assert (stored["text"], stored["scope"]) == ("I prefer tabs over spaces.", "global")

    asked = await duck.run(
        "What do you remember about me?", thread_id="b", critic=False, memory=False
    )
    assert asked.answer == "I remember 1 thing:\n- I prefer tabs over spaces."
    # A question about what was told: the person's own words, recalled.
    back = await duck.run(
        "so, do I prefer tabs or spaces?", thread_id="c", critic=False, memory=False
    )
    assert back.answer == "You told me: I prefer tabs over spaces."
    requests = [r for r in llm.requests if "MemoryProposal" in json.dumps(r)]
    assert requests == []


async def test_a_secret_is_not_kept_even_when_asked(duck: DuckLM) -> None:
    result = await duck.run("please remember: my bank pin is 4411", thread_id="s", critic=False)
    assert result.answer.startswith("I won't keep that: it looks like it contains a password")
    reviewed = await duck.reviewed("s")
    (decision,) = [e for e in reviewed if e["type"] == "memory_policy_decision"]
    assert decision["action"] == "skip" and decision["text"] == ""
    assert await duck.context.memory.list() == []  # type: ignore[union-attr]


async def test_ducklm_says_what_it_can_do_and_where_from_what_it_has(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path
) -> None:
    can = await duck.run("Hi! What can you do?", critic=False, memory=False)
    assert can.answer.startswith("I can:\n- list the files in the workspace\n- read files")
    assert "- run commands" in can.answer and "I ask before changing anything" in can.answer
    which = await duck.run("Which model are you running on?", critic=False, memory=False)
    assert which.answer == "The answers come from the model `scripted-duck`."
    where = await duck.run("where do you work?", critic=False, memory=False)
    assert str(workspace) in where.answer
    assert llm.requests == []
