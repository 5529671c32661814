"""Reviews whose JSON is cut at the output limit (issue 44): closed where the cut fell, or
asked once more; the review completes either way."""

from __future__ import annotations

import json

from ducklm.runtime.facade import DuckLM
from tests.support.scripted_llm import ScriptedLLM, reply

LOOP = '{"score": 0.8, "summary": "read the notes, read the list, read the notes, read the li'


async def test_a_looping_critique_cut_at_the_limit_is_closed(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    llm.script(
        reply("Ducks eat plants."),
        reply(LOOP, finish_reason="length"),
        reply(json.dumps({"should_store": False})),
    )
    result = await duck.run("what do ducks eat?")
    reviewed = await duck.reviewed(result.thread_id)
    (done,) = [e for e in reviewed if e["type"] == "reflection_completed"]
    assert done["summary"] == "read the notes, read the list"
    assert not [e for e in reviewed if "stage" in e]
    assert len(llm.requests) == 3, "closed, not asked again"


async def test_a_cut_proposal_that_does_not_fit_is_asked_once_more(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    kept = {
        "should_store": True,
        "text": "Bo rows on Sundays",
        "scope": "global",
        "importance": 0.9,
    }
    llm.script(
        reply("Nice."),
        reply(json.dumps({"score": 0.9, "summary": "fine"})),
        reply('{"shou', finish_reason="length"),
        reply(json.dumps(kept)),
    )
    result = await duck.run("Bo rows on Sundays")
    reviewed = await duck.reviewed(result.thread_id)
    (stored,) = [e for e in reviewed if e["type"] == "memory_stored"]
    assert stored["text"] == "Bo rows on Sundays"
    retry = llm.requests[-1]["messages"]
    assert retry[-1]["content"].startswith("Your reply could not be used: it did not fit")
    assert not [e for e in reviewed if "stage" in e]
