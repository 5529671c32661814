"""Request bodies of the cron routes, as the LangGraph server's OpenAPI names them.

A cron's run fields are a run request's (`RunCreate`, inherited, so they are checked
the same way); the cron adds when (`schedule`, `timezone`, `end_time`), whether
(`enabled`) and, for a thread-less cron, what becomes of each run's thread.
"""

from __future__ import annotations

import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from ducklm.server.agent_protocol.common.schemas import Body, MultitaskStrategy, RunCreate

CRON_FIELDS = frozenset({"schedule", "timezone", "end_time", "enabled", "on_run_completed"})
"""The fields of a cron request that are the cron's, not its runs'."""
CronSortField = Literal[
    "cron_id", "assistant_id", "thread_id", "next_run_date", "end_time", "created_at", "updated_at"
]
CronField = Literal[
    "cron_id",
    "assistant_id",
    "thread_id",
    "on_run_completed",
    "end_time",
    "schedule",
    "timezone",
    "created_at",
    "updated_at",
    "user_id",
    "payload",
    "next_run_date",
    "metadata",
    "enabled",
]


class CronCreate(RunCreate):
    """`POST /runs/crons` and `POST /threads/{thread_id}/runs/crons`."""

    schedule: str = Field(min_length=1, max_length=200)
    timezone: str | None = Field(default=None, max_length=100)
    end_time: datetime.datetime | None = None
    enabled: bool = True
    on_run_completed: Literal["delete", "keep"] = "delete"
    """A thread-less cron's threads: deleted after each run (unless it waits at a
    question), or kept."""
    multitask_strategy: MultitaskStrategy = "enqueue"
    """As the LangGraph server's default for crons: a busy thread's tick waits its turn."""

    def run_payload(self) -> dict[str, Any]:
        """The run request each tick makes (the cron's own fields left out)."""
        return self.model_dump(mode="json", exclude_none=True, exclude=set(CRON_FIELDS))


class CronPatch(Body):
    """`PATCH /runs/crons/{cron_id}`: only the fields sent change (`end_time: null` clears)."""

    schedule: str | None = Field(default=None, min_length=1, max_length=200)
    timezone: str | None = Field(default=None, max_length=100)
    end_time: datetime.datetime | None = None
    enabled: bool | None = None
    on_run_completed: Literal["delete", "keep"] | None = None
    metadata: dict[str, Any] | None = None
    """Merged into the cron's metadata."""
    input: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    webhook: str | None = Field(default=None, min_length=1)
    interrupt_before: Literal["*"] | list[str] | None = None
    interrupt_after: Literal["*"] | list[str] | None = None
    stream_mode: Any = None
    stream_resumable: bool | None = None

    def run_fields(self) -> dict[str, Any]:
        """The run request's fields this patch sets."""
        sent = self.model_fields_set - CRON_FIELDS - {"metadata"}
        return self.model_dump(mode="json", include=sent, exclude_none=True)


class CronFilter(Body):
    """What crons are counted by (`POST /runs/crons/count`)."""

    assistant_id: str | None = None
    thread_id: str | None = None
    metadata: dict[str, Any] | None = None


class CronSearch(CronFilter):
    """`POST /runs/crons/search`."""

    enabled: bool | None = None
    limit: int = Field(default=10, ge=1, le=1000)
    offset: int = Field(default=0, ge=0)
    sort_by: CronSortField = "created_at"
    sort_order: Literal["asc", "desc", "ASC", "DESC"] = "desc"
    select: list[CronField] | None = None


class Cron(BaseModel):
    """A cron as the routes answer it (the LangGraph server's `Cron`)."""

    cron_id: str
    assistant_id: str
    thread_id: str | None
    on_run_completed: str | None
    end_time: str | None
    schedule: str
    timezone: str | None
    created_at: str
    updated_at: str
    user_id: str | None
    payload: dict[str, Any]
    next_run_date: str
    metadata: dict[str, Any]
    enabled: bool
