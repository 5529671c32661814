"""What makes the reviewers and the thinker work on a small model: lenient JSON, scores on
their scale, failures shown once, tool results inside the request."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from ducklm.kit.notices import OnceNotices
from ducklm.turn.prompting.structured import JSONReplyError, parse_json, unit_score
from ducklm.turn.prompting.transcript import fold_turn


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


def test_a_turns_tool_results_fold_into_its_request() -> None:
    call = {"name": "list_dir", "args": {"path": "."}, "id": "c1", "type": "tool_call"}
    earlier = [HumanMessage("hi"), AIMessage("Hello!")]
    turn = [
        HumanMessage("List the files."),
        AIMessage("", tool_calls=[call]),
        ToolMessage("notes.md", tool_call_id="c1", name="list_dir"),
    ]
    # Only the request with its results: a tiny model copies earlier answers it is shown.
    (folded,) = fold_turn([*earlier, *turn])
    assert isinstance(folded, HumanMessage)
    assert folded.text.startswith("List the files.")
    assert "[tool list_dir result]\nnotes.md" in folded.text
    assert "Hello!" not in folded.text
    assert fold_turn(earlier) == earlier, "a turn without tools stays as it is"
