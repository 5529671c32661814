"""What makes the reviewers work on a small model: scores read on their scale, notices once."""

from __future__ import annotations

import pytest

from ducklm.runtime.notices import OnceNotices
from ducklm.turn.prompting.structured import JSONReplyError, parse_json, unit_score


def test_once_notices_say_first_only_once_and_stay_bounded() -> None:
    notices = OnceNotices(max_keys=2)
    assert notices.first("a") and not notices.first("a")
    assert notices.first("b") and notices.first("c")
    assert notices.first("a"), "the oldest key was forgotten"


@pytest.mark.parametrize(
    ("raw", "read"), [(0.4, 0.4), (1, 1.0), (7, 0.7), (85, 0.85), (-1, -1), (500, 500), ("x", "x")]
)
def test_unit_score_reads_tens_and_hundreds(raw: object, read: object) -> None:
    assert unit_score(raw) == read


def test_a_raw_newline_inside_a_string_is_still_json() -> None:
    assert parse_json('{"summary": "two\nlines\tand a tab"}') == {
        "summary": "two\nlines\tand a tab"
    }
    with pytest.raises(JSONReplyError, match="not valid JSON"):
        parse_json('{"summary": "cut')
