"""From a cron request to a stored cron, a patch onto one, and a cron in the wire's shape.

Checked here, before anything is stored (a `422` saying why): the schedule, the
timezone, the webhook (the URL policy), and, for a patch, the run request the cron will
make. The next run is computed on the scheduler's clock, so a test can move it.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import replace
from typing import Any

from fastapi import HTTPException
from pydantic import ValidationError

from ducklm.runtime.facade import DuckLM
from ducklm.server.agent_protocol.common.identity import ASSISTANT_ID
from ducklm.server.agent_protocol.common.schemas import RunCreate
from ducklm.server.agent_protocol.common.views import iso_time
from ducklm.server.agent_protocol.crons.schedule import (
    ScheduleError,
    check_schedule,
    load_zone,
    next_time,
)
from ducklm.server.agent_protocol.crons.schemas import CronCreate, CronPatch
from ducklm.server.agent_protocol.runs.spec import check_run_webhook
from ducklm.stores.agent_protocol.crons import CronRow

BAD_PATCH = "the patched cron's run: {where}: {why}"
EMPTY_PATCH = "Request body cannot be empty"


async def new_cron(body: CronCreate, thread_id: str | None, duck: DuckLM, now: float) -> CronRow:
    """The cron `body` asks for (on `thread_id`, or thread-less), due after `now`."""
    check_run_webhook(body.webhook, duck)
    next_run = await _next_run(body.schedule, body.timezone, now)
    created = time.time()
    return CronRow(
        cron_id=str(uuid.uuid4()),
        assistant_id=ASSISTANT_ID,
        thread_id=thread_id,
        on_run_completed=None if thread_id else body.on_run_completed,
        end_time=body.end_time.timestamp() if body.end_time else None,
        schedule=body.schedule,
        timezone=body.timezone,
        created_at=created,
        updated_at=created,
        payload={**body.run_payload(), "assistant_id": ASSISTANT_ID},
        metadata=body.metadata or {},
        enabled=body.enabled,
        next_run_date=next_run,
    )


async def patched(row: CronRow, patch: CronPatch, duck: DuckLM, now: float) -> CronRow:
    """`row` with `patch` applied; its next run again from `now` if its timing changed."""
    sent = patch.model_fields_set
    if not sent:
        raise HTTPException(400, EMPTY_PATCH)
    check_run_webhook(patch.webhook, duck)
    payload = {**row.payload, **patch.run_fields()}
    _check_run(payload)
    schedule = patch.schedule or row.schedule
    timezone = patch.timezone if "timezone" in sent else row.timezone
    next_run = row.next_run_date
    if {"schedule", "timezone"} & sent:
        next_run = await _next_run(schedule, timezone, now)
    end_time = row.end_time
    if "end_time" in sent:
        end_time = patch.end_time.timestamp() if patch.end_time else None
    return replace(
        row,
        schedule=schedule,
        timezone=timezone,
        next_run_date=next_run,
        end_time=end_time,
        enabled=row.enabled if patch.enabled is None else patch.enabled,
        on_run_completed=_on_run_completed(row, patch),
        payload=payload,
        metadata={**row.metadata, **(patch.metadata or {})},
        updated_at=time.time(),
    )


def _on_run_completed(row: CronRow, patch: CronPatch) -> str | None:
    if row.thread_id is not None:  # a thread's cron keeps its thread: nothing to choose
        return None
    return patch.on_run_completed or row.on_run_completed


def cron_view(row: CronRow) -> dict[str, Any]:
    """A `Cron` as the LangGraph server answers it."""
    return {
        "cron_id": row.cron_id,
        "assistant_id": row.assistant_id,
        "thread_id": row.thread_id,
        "on_run_completed": row.on_run_completed,
        "end_time": iso_time(row.end_time) if row.end_time is not None else None,
        "schedule": row.schedule,
        "timezone": row.timezone,
        "created_at": iso_time(row.created_at),
        "updated_at": iso_time(row.updated_at),
        "user_id": None,
        "payload": row.payload,
        "next_run_date": iso_time(row.next_run_date),
        "metadata": row.metadata,
        "enabled": row.enabled,
    }


async def _next_run(schedule: str, timezone: str | None, now: float) -> float:
    try:
        zone = await load_zone(timezone)
        return next_time(check_schedule(schedule), now, zone)
    except ScheduleError as exc:
        raise HTTPException(422, str(exc)) from None


def _check_run(payload: dict[str, Any]) -> None:
    try:
        RunCreate.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "run"
        raise HTTPException(422, BAD_PATCH.format(where=where, why=first["msg"])) from None
