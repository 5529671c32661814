"""A JSON reply cut at the output limit, closed where it was cut (issue 44)."""

from __future__ import annotations

import pytest

from ducklm.turn.prompting.cut_json import close_cut_json


@pytest.mark.parametrize(
    ("cut", "closed"),
    [
        # a looping string ends where its loop began
        (
            '{"score": 0.7, "summary": "the list, the files, the list, the files, the li',
            {"score": 0.7, "summary": "the list, the files"},
        ),
        # a cut word is dropped, the object closed
        (
            '{"should_store": true, "text": "Bo likes kayaks on Sund',
            {"should_store": True, "text": "Bo likes kayaks on"},
        ),
        # a key without its value is dropped
        ('{"score": 1, "summary": "ok", "what_fai', {"score": 1, "summary": "ok"}),
        ('{"score": 1, "summary": "ok", "what_failed": ', {"score": 1, "summary": "ok"}),
        # a number at the cut is kept, arrays close too
        ('{"relevant": [1, 3', {"relevant": [1, 3]}),
        ('{"score": 0.25', {"score": 0.25}),
        # text before the JSON (a model's preamble) is skipped; a whole reply is itself
        ('Sure! {"a": {"b": "c"}}', {"a": {"b": "c"}}),
        ('{"a": "say \\"hi\\" twi', {"a": 'say "hi"'}),
    ],
)
def test_a_cut_reply_closes_at_its_last_sound_part(cut: str, closed: object) -> None:
    assert close_cut_json(cut) == closed


@pytest.mark.parametrize("cut", ["", "no json here", '"just a string', "]"])
def test_nothing_readable_gives_none(cut: str) -> None:
    assert close_cut_json(cut) is None
