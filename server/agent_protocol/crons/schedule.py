"""Cron expressions: checked once at the edge, and the next time one fires.

croniter reads the expressions (the standard five fields, `minute hour day month
weekday`, as LangGraph's server reads them with the same package). Times are Unix
seconds in UTC; a cron's `timezone` (IANA) says in which zone its fields are read.
"""

from __future__ import annotations

import asyncio
import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

BAD_SCHEDULE = (
    "Invalid cron schedule: {schedule!r}. Use the standard cron format "
    "(minute hour day_of_month month day_of_week), e.g. '*/5 * * * *' for every 5 minutes."
)
BAD_TIMEZONE = "Invalid timezone: {timezone!r}. Use an IANA timezone name (e.g. 'Europe/Paris')."
MISSED_COUNT_CAP = 10_000
"""Missed ticks are counted up to this many (a cron down for years is not counted out)."""


class ScheduleError(ValueError):
    """A schedule or timezone that cannot be read; the message says which and why."""


def check_schedule(schedule: str) -> str:
    """`schedule` if croniter reads it.

    Raises:
        ScheduleError: It does not.
    """
    if not croniter.is_valid(schedule):
        raise ScheduleError(BAD_SCHEDULE.format(schedule=schedule))
    return schedule


async def load_zone(timezone: str | None) -> datetime.tzinfo:
    """The zone named `timezone` (UTC for `None`); read off the loop (tzdata is files).

    Raises:
        ScheduleError: No such zone.
    """
    if timezone is None:
        return datetime.UTC
    try:
        return await asyncio.to_thread(ZoneInfo, timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(BAD_TIMEZONE.format(timezone=timezone)) from None


def next_time(schedule: str, after: float, zone: datetime.tzinfo) -> float:
    """The first time after `after` (Unix seconds) that `schedule` fires in `zone`."""
    start = datetime.datetime.fromtimestamp(after, zone)
    found: datetime.datetime = croniter(schedule, start).get_next(datetime.datetime)
    return found.timestamp()


def missed_between(schedule: str, due: float, now: float, zone: datetime.tzinfo) -> int:
    """How many more times `schedule` fell due after `due` up to `now` (capped)."""
    ticks = croniter(schedule, datetime.datetime.fromtimestamp(due, zone))
    count = 0
    while count < MISSED_COUNT_CAP:
        if ticks.get_next(datetime.datetime).timestamp() > now:
            break
        count += 1
    return count
