"""An MCP server's question and the person's answer: read once, checked against the form.

The form is the elicitation's flat schema (string, number, integer, boolean, enum,
multi-select); defaults fill what the person left out; a bad answer says what is wrong.
The call's `CallAsks` hands the answers in hand to the server's same questions, in order,
and stops at a new one.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from ducklm.cli.elicit import read_elicit
from ducklm.mcp.asks import Asked, CallAsks, QuestionPending, Refused, Sampled, SamplingAsk
from ducklm.tools.elicitation import check_elicit_answer, read_elicit_answer
from ducklm.tools.hitl import DecisionError, ElicitAnswer, ServerQuestion

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "nights": {"type": "integer", "default": 2},
        "budget": {"type": "number"},
        "breakfast": {"type": "boolean", "default": True},
        "seat": {"type": "string", "enum": ["window", "aisle"], "default": "window"},
        "extras": {"type": "array", "items": {"enum": ["wifi", "parking"]}},
    },
    "required": ["city"],
}
FORM: ServerQuestion = {
    "type": "elicitation",
    "call_id": "c1",
    "tool": "book",
    "server": "trips",
    "message": "Where to?",
    "requested_schema": SCHEMA,
}


def _accept(**content: Any) -> ElicitAnswer:
    return check_elicit_answer(FORM, ElicitAnswer(action="accept", content=content))


def test_defaults_fill_what_the_person_left_out() -> None:
    answer = _accept(city="Porto", budget=99.5, extras=["wifi"])
    assert answer.content == {
        "city": "Porto",
        "nights": 2,
        "budget": 99.5,
        "breakfast": True,
        "seat": "window",
        "extras": ["wifi"],
    }


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ({"nights": 2}, "the field 'city' is required"),
        ({"city": "Porto", "nights": 2.5}, "'nights' must be an integer"),
        ({"city": "Porto", "nights": True}, "'nights' must be an integer"),
        ({"city": "Porto", "budget": "cheap"}, "'budget' must be a number"),
        ({"city": "Porto", "breakfast": "yes"}, "'breakfast' must be a boolean"),
        ({"city": "Porto", "seat": "roof"}, "'seat' must be one of: window, aisle"),
        ({"city": "Porto", "extras": ["spa"]}, "'extras' takes a list of: wifi, parking"),
        ({"city": "Porto", "pets": 1}, "the form has no field 'pets'"),
    ],
)
def test_a_form_that_does_not_fit_says_what_is_wrong(content: dict[str, Any], words: str) -> None:
    with pytest.raises(DecisionError, match=words):
        _accept(**content)


def test_decline_and_cancel_carry_nothing_and_are_not_checked() -> None:
    assert check_elicit_answer(FORM, ElicitAnswer(action="decline")).wire() == {"action": "decline"}
    with pytest.raises(ValueError, match="only accept carries content"):
        ElicitAnswer(action="cancel", content={"city": "Porto"})


def test_the_wire_is_read_once_with_clear_errors() -> None:
    assert read_elicit_answer({"action": "cancel"}) == ElicitAnswer(action="cancel")
    with pytest.raises(DecisionError, match=re.escape('answer with {"action": "accept"')):
        read_elicit_answer({"decisions": []})
    with pytest.raises(DecisionError, match="Extra inputs"):
        read_elicit_answer({"action": "accept", "contents": {}})
    sampling: ServerQuestion = {**FORM, "type": "sampling"}  # type: ignore[typeddict-item]
    with pytest.raises(DecisionError, match="takes no content"):
        check_elicit_answer(sampling, ElicitAnswer(action="accept", content={"x": 1}))


def test_the_cli_reads_an_action_or_the_forms_content() -> None:
    assert read_elicit("decline") == ElicitAnswer(action="decline")
    assert read_elicit('{"city": "Porto"}') == ElicitAnswer(
        action="accept", content={"city": "Porto"}
    )
    with pytest.raises(DecisionError, match="--elicit takes accept, decline, cancel"):
        read_elicit("yes please")


async def test_answers_in_hand_go_to_the_same_questions_in_order() -> None:
    earlier = Asked(FORM, {"action": "accept", "content": {"city": "Porto"}})
    asks = CallAsks(call_id="c1", server="trips", tool="book", trusted=False, answered=[earlier])
    assert await asks.elicit("Where to?", SCHEMA) == earlier.answer
    # A second question, not answered yet: the call is to stop and ask it.
    with pytest.raises(QuestionPending):
        await asks.elicit("How many people?", {"type": "object", "properties": {}})
    assert asks.stopped.is_set() and asks.pending is not None
    assert asks.pending["message"] == "How many people?"


async def test_an_untrusted_servers_sampling_needs_a_yes() -> None:
    async def model(ask: SamplingAsk) -> Sampled:
        return Sampled(text=f"re: {ask.messages[-1]['text']}", model="m")

    ask = SamplingAsk(messages=[{"role": "user", "text": "hi"}], system_prompt=None, max_tokens=5)
    trusted = CallAsks(call_id="c", server="s", tool="t", trusted=True, sampler=model)
    assert (await trusted.sample(ask)).text == "re: hi"
    untrusted = CallAsks(call_id="c", server="s", tool="t", trusted=False, sampler=model)
    with pytest.raises(QuestionPending):
        await untrusted.sample(ask)
    assert untrusted.pending is not None and untrusted.pending["type"] == "sampling"
    declined = Asked(untrusted.pending, {"action": "decline"})
    again = CallAsks(
        call_id="c", server="s", tool="t", trusted=False, sampler=model, answered=[declined]
    )
    with pytest.raises(Refused, match="declined"):
        await again.sample(ask)
