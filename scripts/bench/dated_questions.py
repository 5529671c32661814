"""Time-aware questions about generated conversations, written by their generator.

Two kinds, each about a fact told in a dated turn (`Told`):

- `when`: "When did Maya buy a telescope?" asked some days after the last session; the
  answer is the day the evidence turn was said.
- `dated`: "What did Maya buy last week?" with a time phrase that is true of the day the
  fact was told, as seen from the moment the question is asked (`asked_at`): "yesterday",
  "4 days ago", "last week", "on March 14", "in March". The phrase is chosen at random
  and the moment to fit it; the evidence is every fact of the same person and topic told
  within the span the phrase names (by the calendar, not by DuckLM's reading of it).

The generators call `when_question` and `dated_question` with their own wording, after
their conversations are built and from a random stream of their own, so the sets they
had before are unchanged.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

PHRASES = ("yesterday", "days ago", "last week", "on day", "in month")


@dataclass(frozen=True)
class Told:
    """A fact told in one turn: who said it, about whom, on which topic."""

    speaker: str
    subject: str
    topic: str
    """What the fact is about, the key that makes two facts alike (`purchase`, `flight`)."""
    turn: str
    said_at: datetime


@dataclass(frozen=True)
class TimedQuestion:
    """A question about time, when it is asked, and the turns that answer it."""

    kind: str
    """`when` (the answer is a date) or `dated` (the question names a time)."""
    text: str
    asked_at: datetime
    evidence: tuple[str, ...]
    days: frozenset[date]
    """The days the evidence turns were said: a right answer's date is one of them."""


def when_question(told: Told, text: str, rng: random.Random, last: datetime) -> TimedQuestion:
    """`text` asks when `told` was said; asked 1-30 days after the last session."""
    asked = last + timedelta(days=rng.randint(1, 30), hours=rng.randint(0, 5))
    return TimedQuestion("when", text, asked, (told.turn,), frozenset({told.said_at.date()}))


def dated_question(
    told: Told,
    wording: Callable[[str], str],
    rng: random.Random,
    alike: Sequence[Told],
) -> TimedQuestion:
    """A question naming the time `told` was said; `wording(phrase)` is its text.

    `alike`: every fact of the conversation; those of the same speaker, subject and topic
    told within the phrase's span are evidence too.
    """
    phrase, asked, (first, end) = _phrase(rng, told.said_at)
    evidence = [
        t for t in alike
        if (t.speaker, t.subject, t.topic) == (told.speaker, told.subject, told.topic)
        and first <= t.said_at.date() < end
    ]  # fmt: skip
    return TimedQuestion(
        "dated",
        wording(phrase),
        asked,
        tuple(t.turn for t in evidence),
        frozenset(t.said_at.date() for t in evidence),
    )


def _phrase(rng: random.Random, said: datetime) -> tuple[str, datetime, tuple[date, date]]:
    """A phrase true of `said` seen from the returned moment, and the days it names."""
    day = said.date()
    hour = timedelta(hours=rng.randint(8, 21))
    at_day = datetime(day.year, day.month, day.day)
    kind = rng.choice(PHRASES)
    if kind == "yesterday":
        return "yesterday", at_day + timedelta(days=1) + hour, (day, day + timedelta(days=1))
    if kind == "days ago":
        n = rng.randint(2, 6)
        return f"{n} days ago", at_day + timedelta(days=n) + hour, (day, day + timedelta(days=1))
    if kind == "last week":
        monday = day - timedelta(days=day.weekday())
        asked = at_day + timedelta(days=7 - day.weekday() + rng.randint(0, 6)) + hour
        return "last week", asked, (monday, monday + timedelta(days=7))
    if kind == "on day":
        asked = at_day + timedelta(days=rng.randint(7, 60)) + hour
        return f"on {day:%B} {day.day}", asked, (day, day + timedelta(days=1))
    first = day.replace(day=1)
    end = (first + timedelta(days=32)).replace(day=1)
    asked = datetime(end.year, end.month, end.day) + timedelta(days=rng.randint(0, 40)) + hour
    return f"in {day:%B}", asked, (first, end)
