"""The facts under an answer (`ducklm.runtime.answer_facts`) and a conversation's model
(`ModelRoles.switched`): what the runner and the run's context are handed."""

from __future__ import annotations

import asyncio

from ducklm.models.clients import ModelRoles
from ducklm.models.roles import ROLE_NAMES, RoleConfig
from ducklm.runtime.answer_facts import AnswerClock
from ducklm.runtime.transcript import facts_text


def _usage(tokens: int | None) -> dict[str, object]:
    return {"role": "thinker", "model": "m", "output_tokens": tokens, "input_tokens": 9}


def test_no_answer_no_facts() -> None:
    clock = AnswerClock()
    clock.see("model_usage", _usage(3))  # a call whose text never reached the person
    assert clock.fields() is None


def test_the_server_count_wins_over_the_pieces() -> None:
    clock = AnswerClock()
    clock.see("model_usage", _usage(99))  # before the answer: a step's, not the answer's
    for piece in ("Hel", "lo", " there"):
        clock.see("token", {"text": piece})
    clock.see("model_usage", _usage(2))
    clock.see("answer_cut", {"reason": "repeating"})
    facts = clock.fields()
    assert facts is not None
    assert facts["model"] == "m" and facts["role"] == "thinker"
    assert facts["tokens"] == 2 and facts["tokens_counted_by"] == "server"
    assert facts["cut"] == "repeating" and facts["prompt_cut"] is False
    assert facts["first_token_s"] >= 0


def test_without_usage_the_pieces_count_and_no_model_is_named() -> None:
    clock = AnswerClock()
    clock.see("token", {"text": "a tool's result, streamed"})
    clock.see("context_cut", {"role": "thinker"})
    facts = clock.fields()
    assert facts is not None
    assert facts["tokens"] == 1 and facts["tokens_counted_by"] == "pieces"
    assert facts["tokens_per_s"] is None, "one piece has no rate"
    assert facts["model"] == "" and facts["prompt_cut"] is True
    assert facts_text(facts).startswith("no model (a tool's result) · first token ")


def test_a_call_that_said_nothing_is_named_by_the_answering_role() -> None:
    clock = AnswerClock()
    clock.see("token", {"text": "Hi"})
    facts = clock.fields(("thinker", "local"))
    assert facts is not None and (facts["role"], facts["model"]) == ("thinker", "local")


def test_the_facts_in_words() -> None:
    facts = {"model": "m", "first_token_s": 0.25, "tokens": 40, "tokens_per_s": 20.0,
             "cut": "length", "prompt_cut": False}  # fmt: skip
    assert facts_text(facts) == "m · first token 0.25 s · 40 tokens, 20/s · cut (length)"


def _roles() -> ModelRoles:
    configs = {
        name: RoleConfig(
            name=name,
            model="local",
            base_url="http://127.0.0.1:9/v1",
            api_key="x",
            prompt=f"{name}.md",
        )
        for name in ROLE_NAMES
    }
    return ModelRoles.build(configs)


async def test_a_chosen_model_switches_only_the_answering_roles() -> None:
    roles = await asyncio.to_thread(_roles)
    try:
        assert roles.switched(None) is roles and roles.switched("local") is roles
        switched = roles.switched("bigger")
        assert switched is roles.switched("bigger"), "built once per model"
        for role in ("thinker", "action"):
            assert switched.config(role).model == "bigger"
            assert switched.chat(role).model_name == "bigger"
            assert switched.chat(role).async_client is roles.chat(role).async_client
        assert switched.config("critic").model == "local"
        assert switched.same_model("action", "thinker")
        assert roles.config("thinker").model == "local", "the configured roles stay"
    finally:
        await roles.aclose()
