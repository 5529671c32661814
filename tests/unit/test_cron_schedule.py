"""Cron expressions: read once, the next time one fires, and how many ticks were missed."""

from __future__ import annotations

import datetime

import pytest

from ducklm.server.agent_protocol.crons.schedule import (
    ScheduleError,
    check_schedule,
    load_zone,
    missed_between,
    next_time,
)

MINUTE = 1_900_000_020.0  # a multiple of 60
UTC = datetime.UTC


def test_the_next_time_is_strictly_after() -> None:
    assert next_time("* * * * *", MINUTE - 30, UTC) == MINUTE
    assert next_time("* * * * *", MINUTE, UTC) == MINUTE + 60
    assert next_time("*/5 * * * *", MINUTE, UTC) % 300 == 0


async def test_a_timezone_moves_the_hour() -> None:
    paris = await load_zone("Europe/Paris")
    at = datetime.datetime(2030, 1, 15, 6, 30, tzinfo=UTC).timestamp()
    nine_paris = datetime.datetime(2030, 1, 15, 8, 0, tzinfo=UTC).timestamp()  # UTC+1 in winter
    assert next_time("0 9 * * *", at, paris) == nine_paris
    assert next_time("0 9 * * *", at, UTC) == nine_paris + 3600


def test_missed_ticks_are_counted_after_the_due_one() -> None:
    assert missed_between("* * * * *", MINUTE, MINUTE, UTC) == 0
    assert missed_between("* * * * *", MINUTE, MINUTE + 59, UTC) == 0
    assert missed_between("* * * * *", MINUTE, MINUTE + 600, UTC) == 10


@pytest.mark.parametrize("schedule", ["every hour", "61 * * * *", "* * * *", ""])
def test_a_bad_schedule_says_so(schedule: str) -> None:
    with pytest.raises(ScheduleError, match="Invalid cron schedule"):
        check_schedule(schedule)


async def test_an_unknown_timezone_says_so() -> None:
    with pytest.raises(ScheduleError, match="IANA timezone"):
        await load_zone("Mars/Olympus")
    assert await load_zone(None) is UTC
