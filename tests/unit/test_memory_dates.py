"""Dates asked about, dates shown: `ducklm.memory.dates` and the recalled line."""

from __future__ import annotations

from datetime import datetime

import pytest

from ducklm.memory.dates import find_window, mentions_time, phrase_window, said_on
from ducklm.turn.prompting.recalled import recalled_line

NOW = datetime(2026, 5, 20, 12, 0).timestamp()


def days(window: object) -> tuple[str, str] | None:
    if window is None:
        return None
    since = datetime.fromtimestamp(window.since).date().isoformat()  # type: ignore[attr-defined]
    until = datetime.fromtimestamp(window.until).date().isoformat()  # type: ignore[attr-defined]
    return since, until


@pytest.mark.parametrize(
    ("request_text", "span"),
    [
        ("What did we discuss 3 days ago?", ("2026-05-16", "2026-05-19")),
        ("what did I say last week about the car", ("2026-05-11", "2026-05-18")),
        ("what did we say in May", ("2026-05-01", "2026-06-01")),
        ("last month", ("2026-04-01", "2026-05-01")),
        ("anything from 2025?", ("2025-01-01", "2026-01-01")),
        # the phrases the benchmark's time-aware questions use (scripts/bench/dated_questions.py)
        ("What did Omar say about Kofi yesterday?", ("2026-05-18", "2026-05-21")),
        ("Where did Hana go 5 days ago?", ("2026-05-14", "2026-05-17")),
        ("What did Maya buy on May 8?", ("2026-05-07", "2026-05-10")),
        ("When did Hana go on a ski week in the Tatras?", None),
        ("When did Ana go to the support group?", None),
        ("may I ask about Paris", None),
    ],
)
def test_a_time_in_a_request_is_a_span(request_text: str, span: tuple[str, str] | None) -> None:
    assert days(find_window(request_text, NOW)) == span


def test_ordinary_words_are_not_dates() -> None:
    # dateparser's search alone takes "we" for a day; the time-word test keeps it out
    assert not mentions_time("we went to the support group")
    assert find_window("what did we eat, we wondered", NOW) is None


def test_a_date_the_model_writes_is_its_whole_day_or_month() -> None:
    assert days(phrase_window("2026-05-08", NOW)) == ("2026-05-08", "2026-05-09")
    assert days(phrase_window("May 2026", NOW)) == ("2026-05-01", "2026-06-01")
    with pytest.raises(ValueError, match="is not a date"):
        phrase_window("the blue moon", NOW)


def test_recall_shows_when_a_fact_and_an_episode_were_said() -> None:
    at = datetime(2026, 5, 8, 9, 30).timestamp()
    assert said_on(at) == "said on 2026-05-08"
    fact = {"text": "Ana lives in Porto", "said_at": at}
    assert recalled_line(fact) == "Ana lives in Porto (said on 2026-05-08)"
    episode = {"text": "I moved to Porto", "said_at": at, "kind": "episode", "speaker": "user"}
    assert recalled_line(episode) == (
        "The user said on 2026-05-08, in another conversation: I moved to Porto"
    )
    assert recalled_line({"text": "from an old checkpoint"}) == "from an old checkpoint"
    long = {**episode, "text": "x" * 1000}
    assert recalled_line(long).endswith("x ...")
