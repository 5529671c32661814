"""An MCP server's questions during a tool call, through the whole graph.

tests/support/mcp_server.py over stdio, at 2026-07-28 (its questions come as an
`input_required` result) and, where a test says so, pinned to 2025-11-25 (requests
during the call): `book_trip` asks the person for a form (elicitation) and records the
booking only after the answer; `summarize` asks the client's model (sampling). The
elicitation becomes a question of the run (the same interrupt as approvals), answered
by the person and never by the model; at 2026-07-28 the call is made again with the
answer, and what ran before it in the step does not run again. Sampling from a trusted
server is served by DuckLM's model (the scripted one) and shown as `mcp_sampled`; from
an untrusted one the person is asked first. `open_link` asks the person to open a link (URL-mode
elicitation): the same question, answered without content. At 2025-11-25 a question
asked inside the call (`reserve_table`) holds the call open until the answer comes, up
to a bound the card shows; past it, the call is made again with the answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM, RunResult
from ducklm.tools.hitl import DecisionError, ElicitAnswer
from tests.support.mcp_server import PAY_LINK
from tests.support.mcp_servers import OLDER, python_server, write_config
from tests.support.scripted_llm import ScriptedLLM, call, reply

QUIET = {"critic": False, "memory": False}
QUESTION = "Where should the trip go?"


@pytest.fixture
def sent(tmp_path: Path) -> Path:
    return tmp_path / "sent.txt"


@pytest.fixture
def revision() -> str | None:
    """The revision the servers are pinned to (`None`: the current one is agreed)."""
    return None


@pytest.fixture
def settings(settings: Settings, tmp_path: Path, sent: Path, revision: str | None) -> Settings:
    env = {"MCP_TEST_SENT": str(sent)}
    config = write_config(
        tmp_path / "mcp.json",
        trips=python_server(env=env, timeout_s=20, revision=revision),
        notes=python_server(trust="trusted", env=env, timeout_s=20, revision=revision),
    )
    update = {
        "mcp_config": config,
        "mcp_tool_tokens": 100_000,
        "ctx_size": 32_768,
        "max_input_tokens": 16_384,
    }
    return settings.model_copy(update=update)


@pytest.fixture
async def duck(settings: Settings) -> AsyncIterator[DuckLM]:
    async with DuckLM.open(settings) as runtime:
        yield runtime


def _asked(result: RunResult) -> dict[str, Any]:
    (question,) = [e for e in result.events if e["type"] == "elicitation_requested"]
    return question


async def _bookings(sent: Path) -> list[str]:
    if not await asyncio.to_thread(sent.exists):
        return []
    return (await asyncio.to_thread(sent.read_text)).splitlines()


async def _to_the_form(duck: DuckLM, llm: ScriptedLLM, *calls: Any) -> RunResult:
    """Run a turn whose step makes `calls`, approve them; the run stops at the form."""
    llm.script(reply(tool_calls=list(calls)))
    result = await duck.run("book me a trip", thread_id="t1", **QUIET)
    assert result.status == "interrupted"
    result = await duck.resume_run("t1", [{"type": "approve"}] * len(calls), **QUIET)
    assert result.status == "interrupted"
    return result


def _never_told_the_model(llm: ScriptedLLM) -> None:
    assert QUESTION not in json.dumps(llm.requests)


@pytest.mark.parametrize("revision", [None, OLDER])
async def test_an_accepted_form_reaches_the_server_and_nothing_runs_twice(
    duck: DuckLM, llm: ScriptedLLM, sent: Path
) -> None:
    # A call that sends first, then the one that asks: the send must not run again.
    result = await _to_the_form(
        duck, llm, call("trips__send", text="hello"), call("trips__book_trip")
    )
    question = _asked(result)["request"]
    assert (question["type"], question["message"]) == ("elicitation", QUESTION)
    assert question["server"] == "trips" and question["tool"] == "book_trip"
    assert set(question["requested_schema"]["properties"]) == {"city", "nights", "seat"}
    asked_model = len(llm.requests)
    assert await _bookings(sent) == ["hello"]

    llm.script(reply("Booked Porto."))
    answer = ElicitAnswer(action="accept", content={"city": "Porto"})
    events = [e async for e in duck.answer("t1", answer)]
    done = events[-1]
    assert done["type"] == "done" and done["status"] == "completed", events[-3:]
    # The defaults the form showed filled the fields the person left alone.
    assert await _bookings(sent) == ["hello", "booked Porto 2 window"]
    finished = [e for e in events if e["type"] == "tool_call_finished"]
    assert [e["output"] for e in finished] == ["booked Porto for 2 nights, window seat"]
    started = [e for e in events if e["type"] == "tool_call_started"]
    assert started == []  # the card of the first attempt goes on
    assert len(llm.requests) == asked_model + 1  # no model was asked for the answer
    _never_told_the_model(llm)


@pytest.mark.parametrize("revision", [OLDER])
async def test_at_2025_11_25_the_call_waits_for_the_answer_and_starts_once(
    duck: DuckLM, llm: ScriptedLLM, sent: Path
) -> None:
    result = await _to_the_form(duck, llm, call("trips__reserve_table"))
    question = _asked(result)["request"]
    assert question["message"] == "How many people?"
    assert "waits for your answer for up to 5 minutes" in question["note"]  # the bound
    (trips,) = [s for s in duck._deps.context.mcp.servers if s.spec.name == "trips"]
    assert len(trips.held) == 1  # the call is open, waiting

    llm.script(reply("Reserved."))
    answer = ElicitAnswer(action="accept", content={"people": 4})
    events = [e async for e in duck.answer("t1", answer)]
    (finished,) = [e for e in events if e["type"] == "tool_call_finished"]
    assert finished["output"] == "reserved for 4"
    # One call: the server started the tool once, and no cancel reached it.
    assert await _bookings(sent) == ["reserve started", "reserved for 4"]
    assert len(trips.held) == 0


@pytest.mark.parametrize("revision", [OLDER])
async def test_a_call_held_past_its_bound_is_stopped_and_made_again_with_the_answer(
    duck: DuckLM, llm: ScriptedLLM, sent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ducklm.mcp.asks.HOLD_S", 0.2)
    await _to_the_form(duck, llm, call("trips__reserve_table"))
    (trips,) = [s for s in duck._deps.context.mcp.servers if s.spec.name == "trips"]
    for _ in range(200):  # the bound passes: the held call is cancelled and dropped
        if not trips.held:
            break
        await asyncio.sleep(0.05)
    assert len(trips.held) == 0

    llm.script(reply("Reserved."))
    answer = ElicitAnswer(action="accept", content={"people": 2})
    events = [e async for e in duck.answer("t1", answer)]
    (finished,) = [e for e in events if e["type"] == "tool_call_finished"]
    assert finished["output"] == "reserved for 2"
    assert await _bookings(sent) == ["reserve started", "reserve started", "reserved for 2"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_or_cancelled_form_books_nothing(
    duck: DuckLM, llm: ScriptedLLM, sent: Path, action: str
) -> None:
    await _to_the_form(duck, llm, call("trips__book_trip"))
    llm.script(reply("Not booked."))
    events = [e async for e in duck.answer("t1", ElicitAnswer(action=action))]
    (finished,) = [e for e in events if e["type"] == "tool_call_finished"]
    assert finished["output"] == f"not booked: the person chose {action}"
    assert await _bookings(sent) == []
    _never_told_the_model(llm)


async def test_an_answer_that_does_not_fit_the_form_is_refused(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    await _to_the_form(duck, llm, call("trips__book_trip"))
    bad = ElicitAnswer(action="accept", content={"city": "Porto", "nights": "two"})
    with pytest.raises(DecisionError, match="'nights' must be an integer"):
        [e async for e in duck.answer("t1", bad)]
    with pytest.raises(DecisionError, match="'city' is required"):
        [e async for e in duck.answer("t1", ElicitAnswer(action="accept"))]
    _, request = await duck.pending_request("t1")
    assert request["type"] == "elicitation"  # still asking


@pytest.mark.parametrize("revision", [None, OLDER])
async def test_a_trusted_servers_sampling_is_served_by_duckLMs_model(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    llm.script(
        reply(tool_calls=[call("notes__summarize", text="a long story about ducks")]),
    )
    result = await duck.run("summarize the story", thread_id="t1", **QUIET)
    llm.script(reply("Ducks swim in ponds."), reply("It is about ducks."))
    result = await duck.resume_run("t1", [{"type": "approve"}], **QUIET)
    assert result.status == "completed"
    (sampled,) = [e for e in result.events if e["type"] == "mcp_sampled"]
    assert sampled["server"] == "notes" and sampled["text"] == "Ducks swim in ponds."
    sampling = next(r for r in llm.requests if "Summarize in five words." in json.dumps(r))
    assert sampling["messages"][-1]["content"] == "a long story about ducks"
    (finished,) = [e for e in result.events if e["type"] == "tool_call_finished"]
    assert finished["output"].endswith(": Ducks swim in ponds.")


@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_an_untrusted_servers_sampling_asks_the_person_first(
    duck: DuckLM, llm: ScriptedLLM, action: str
) -> None:
    result = await _to_the_form(duck, llm, call("trips__summarize", text="ducks"))
    question = _asked(result)["request"]
    assert question["type"] == "sampling" and question["messages"][-1]["text"] == "ducks"
    asked_model = len(llm.requests)
    llm.script(reply("Ducks.") if action == "accept" else reply("Not summarized."))
    if action == "accept":
        llm.script(reply("Summarized."))
    events = [e async for e in duck.answer("t1", ElicitAnswer(action=action))]
    sampled = [e for e in events if e["type"] == "mcp_sampled"]
    (finished,) = [e for e in events if e["type"] == "tool_call_finished"]
    if action == "accept":
        assert len(sampled) == 1 and finished["output"].endswith(": Ducks.")
    else:
        assert sampled == [] and "declined" in finished["output"]
        assert len(llm.requests) == asked_model + 1  # only the turn's own next step


async def test_a_servers_resources_are_listed_and_read_by_a_read_only_tool(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    llm.script(
        reply(tool_calls=[call("notes__list_resources")]),
        reply(tool_calls=[call("notes__read_resource", uri="notes://shop")]),
        reply("Milk and eggs."),
    )
    result = await duck.run("what is on the shopping list resource?", **QUIET)
    assert result.status == "completed" and not result.pending  # a trusted read: unasked
    listed, read = [e for e in result.events if e["type"] == "tool_call_finished"]
    assert "notes://shop shop" in listed["output"] and "The shopping list" in listed["output"]
    assert read["output"].endswith("milk, eggs") and read["mcp_tool"] == "read_resource"


@pytest.mark.parametrize(
    ("action", "revision"), [("accept", None), ("decline", None), ("cancel", OLDER)]
)
async def test_a_link_to_open_is_asked_of_the_person_and_each_answer_reaches_the_server(
    duck: DuckLM, llm: ScriptedLLM, sent: Path, action: str
) -> None:
    result = await _to_the_form(duck, llm, call("trips__open_link"))
    question = _asked(result)["request"]
    assert question["type"] == "elicitation" and question["mode"] == "url"
    assert question["url"] == PAY_LINK and question["server"] == "trips"
    assert question["message"] == "Pay for order 7 in your browser"
    assert "requested_schema" not in question
    # A link takes no content: the answer says only what the person did.
    with pytest.raises(DecisionError, match="a link to open takes no content"):
        [e async for e in duck.answer("t1", ElicitAnswer(action="accept", content={"x": "y"}))]

    llm.script(reply("Done."))
    events = [e async for e in duck.answer("t1", ElicitAnswer(action=action))]
    (finished,) = [e for e in events if e["type"] == "tool_call_finished"]
    assert finished["output"] == f"the person chose {action}"
    assert await _bookings(sent) == [f"link {action} None"]
    # The model never saw the question, so never answered it (the link is in the tool's
    # schema as its default, which the model is offered).
    assert question["message"] not in json.dumps(llm.requests)


async def test_a_link_that_is_not_http_is_never_put_before_the_person(
    duck: DuckLM, llm: ScriptedLLM, sent: Path
) -> None:
    script = call("trips__open_link", url="javascript:alert(1)")
    llm.script(reply(tool_calls=[script]), reply("It could not."))
    await duck.run("pay", thread_id="t1", **QUIET)
    result = await duck.resume_run("t1", [{"type": "approve"}], **QUIET)
    assert result.status == "completed"
    assert [e for e in result.events if e["type"] == "elicitation_requested"] == []
    (finished,) = [e for e in result.events if e["type"] == "tool_call_finished"]
    assert finished["status"] == "error"
    assert "http or https links only" in finished["output"]
    assert await _bookings(sent) == []


@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_a_link_a_refused_call_names_is_asked_and_the_call_made_again(
    duck: DuckLM, llm: ScriptedLLM, sent: Path, action: str
) -> None:
    result = await _to_the_form(duck, llm, call("trips__pay_first"))
    question = _asked(result)["request"]
    assert (question["mode"], question["url"]) == ("url", PAY_LINK)
    assert question["message"] == "Pay for order 7 first"
    if action == "accept":  # the person's browser flow, out of band
        await asyncio.to_thread(sent.write_text, "paid 7\n")
    llm.script(reply("Done."))
    events = [e async for e in duck.answer("t1", ElicitAnswer(action=action))]
    (finished,) = [e for e in events if e["type"] == "tool_call_finished"]
    if action == "accept":
        assert (finished["status"], finished["output"]) == ("success", "order 7 paid")
    else:
        assert finished["status"] == "error"
        assert "needs the person to open a link first, and they chose decline" in finished["output"]
    assert [e for e in events if e["type"] == "elicitation_requested"] == []  # asked once
