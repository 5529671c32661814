"""When something was said: the date shown to the model, and dates asked about.

Dates in a request ("last week", "in May", "3 days ago", "on May 8") are parsed by
`dateparser`, not by rules of our own. Its search also takes ordinary words for dates
("we" became a day), so a found phrase counts only when it holds a word that names a
time (`_TIME_WORD`); the same test decides whether to call the parser at all, so a
request without one costs nothing.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dateparser.date import DateDataParser

SAID_ON = "said on {day}"
"""How a memory's time reads in the prompt."""

DAY_SLACK = timedelta(days=1)
"""A day asked about also takes its neighbours: "three days ago" is rarely exact."""

_MONTHS = (
    "january february march april june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
_DAYS = "monday tuesday wednesday thursday friday saturday sunday"
_TIME_WORD = re.compile(
    r"\b(ago|yesterday|today|tonight|last|past|previous|week|weeks|month|months|year|years|"
    r"weekend|" + "|".join((_MONTHS + " " + _DAYS).split()) + r"|(19|20)\d\d"
    # "may" is a month only beside a day or after in / of / since ("may I ask" is not).
    r"|(in|of|since|early|late) may|may \d{1,2})\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Window:
    """A span of time a request asks about: Unix times, `until` excluded."""

    since: float
    until: float


def said_on(timestamp: float) -> str:
    """`said on 2026-05-08`: the local date of a Unix time, for the prompt."""
    return SAID_ON.format(day=datetime.fromtimestamp(timestamp).date().isoformat())


def mentions_time(text: str) -> bool:
    """Whether `text` holds a word that names a time (cheap; no parsing)."""
    return _TIME_WORD.search(text) is not None


def find_window(text: str, now: float | None = None) -> Window | None:
    """The span of time `text` asks about, or `None` (blocking: call it on a thread).

    Relative phrases count from `now` (default: the clock) and prefer the past; a phrase
    naming a day gives that day (with a day's slack either side), a week, month or year
    gives that whole span. With several phrases, the first one that parses wins.
    """
    if not mentions_time(text):
        return None
    base = datetime.fromtimestamp(time.time() if now is None else now)
    for phrase, _ in _search(text, base):
        if not mentions_time(phrase):
            continue  # dateparser's false friends: "we", "may I", "second"
        parsed = _parser(base).get_date_data(phrase)
        if parsed.date_obj is not None:
            return _span(parsed.date_obj, parsed.period or "day")
    return None


async def find_window_async(text: str, now: float | None = None) -> Window | None:
    """`find_window` off the event loop; a request without a time word never leaves it."""
    if not mentions_time(text):
        return None
    return await asyncio.to_thread(find_window, text, now)


def phrase_window(text: str, now: float | None = None) -> Window:
    """The span one date the model wrote names: `2026-05-08` a day, `May 2026` a month.

    Raises:
        ValueError: `text` is not a date `dateparser` understands.
    """
    base = datetime.fromtimestamp(time.time() if now is None else now)
    parsed = _parser(base).get_date_data(text)
    if parsed.date_obj is None:
        raise ValueError(f"{text!r} is not a date (try 2026-05-08, 'May 2026' or 'last week')")
    return _span(parsed.date_obj, parsed.period or "day", slack=timedelta(0))


def _span(moment: datetime, period: str, slack: timedelta = DAY_SLACK) -> Window:
    day = moment.date()
    if period == "year":
        return _between(date(day.year, 1, 1), date(day.year + 1, 1, 1))
    if period == "month":
        start = day.replace(day=1)
        return _between(start, (start + timedelta(days=32)).replace(day=1))
    if period == "week":
        start = day - timedelta(days=day.weekday())
        return _between(start, start + timedelta(days=7))
    return _between(day - slack, day + timedelta(days=1) + slack)


def _between(start: date, end: date) -> Window:
    def stamp(d: date) -> float:
        return datetime(d.year, d.month, d.day).timestamp()

    return Window(stamp(start), stamp(end))


def _search(text: str, base: datetime) -> list[tuple[str, datetime]]:
    from dateparser.search import search_dates  # noqa: PLC0415  a second to import

    return search_dates(text, languages=["en"], settings=_settings(base)) or []


def _parser(base: datetime) -> DateDataParser:
    from dateparser.date import DateDataParser  # noqa: PLC0415  a second to import

    return DateDataParser(languages=["en"], settings=_settings(base))


def _settings(base: datetime) -> dict[str, Any]:
    # Past first: people ask what was said, and "in May" in June is this May.
    return {"PREFER_DATES_FROM": "past", "RETURN_TIME_AS_PERIOD": True, "RELATIVE_BASE": base}
