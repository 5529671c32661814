"""Words typed after `/server:prompt` bound to the prompt's arguments, or refused saying why."""

from __future__ import annotations

import pytest

from ducklm.mcp.errors import TypedInputError
from ducklm.mcp.mentions import Mention, find_mentions
from ducklm.mcp.prompts import PromptArgument, PromptInfo, bind_arguments

REVIEW = PromptInfo(
    "code",
    "review",
    "Review code",
    [PromptArgument("file", required=True), PromptArgument("focus"), PromptArgument("tone")],
)


@pytest.mark.parametrize(
    ("words", "bound"),
    [
        (["a.py"], {"file": "a.py"}),
        (["a.py", "speed"], {"file": "a.py", "focus": "speed"}),
        (["focus=speed", "a.py"], {"focus": "speed", "file": "a.py"}),
        (["file=a=b.py"], {"file": "a=b.py"}),
    ],
)
def test_named_and_positional_words_bind_in_order(words: list[str], bound: dict[str, str]) -> None:
    assert bind_arguments(REVIEW, words) == bound


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["focus=speed"], "/code:review needs the argument 'file'"),
        (
            ["colour=red", "a.py"],
            "/code:review takes no argument 'colour' (it takes file, focus?, tone?)",
        ),
        (
            ["a", "b", "c", "d"],
            "/code:review takes 3 argument(s) (file, focus?, tone?); 4 were given",
        ),
        (["file=a", "file=b"], "/code:review was given 'file' twice"),
    ],
)
def test_bad_words_are_refused_naming_what_is_wrong(words: list[str], message: str) -> None:
    with pytest.raises(TypedInputError) as refused:
        bind_arguments(REVIEW, words)
    assert str(refused.value) == message


def test_mentions_name_configured_servers_only_and_drop_trailing_punctuation() -> None:
    text = "see @docs:notes://a, and @other:x://y or bob@docs:z and (@docs:file:///b.md)."
    assert find_mentions(text, {"docs"}) == [Mention("docs", "notes://a")]
    assert find_mentions("@docs:file:///b.md.", {"docs"}) == [Mention("docs", "file:///b.md")]
