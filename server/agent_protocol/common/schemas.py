"""Request bodies of the Agent Protocol subset DuckLM serves.

Field names and defaults follow the LangGraph server's OpenAPI. Fields DuckLM does not
act on (TTLs, LangSmith tracing...) are accepted and ignored, as clients send them by
default; wrong types and unknown stream modes are `422`. A run's `webhook` is checked
against the URL policy (`webhooks/policy.py`) before the run exists.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

StreamMode = Literal[
    "values",
    "updates",
    "messages",
    "messages-tuple",
    "custom",
    "events",
    "debug",
    "tasks",
    "checkpoints",
]
ThreadStatusFilter = Literal["idle", "busy", "interrupted", "error"]
MultitaskStrategy = Literal["reject", "interrupt", "rollback", "enqueue"]
RunStatusFilter = Literal["pending", "running", "error", "success", "timeout", "interrupted"]
ThreadField = Literal[
    "thread_id",
    "created_at",
    "updated_at",
    "state_updated_at",
    "metadata",
    "status",
    "config",
    "values",
    "interrupts",
    "error",
]


class Body(BaseModel):
    """A request body: unknown fields are ignored, as the LangGraph server does."""

    model_config = ConfigDict(extra="ignore")


class CheckpointRef(Body):
    """A checkpoint of a thread (the thread comes from the path)."""

    checkpoint_id: str | None = None
    checkpoint_ns: str = ""


class ThreadTtl(Body):
    """A thread's time to live: minutes without activity, then the thread goes."""

    ttl: float = Field(gt=0)
    """Minutes."""
    strategy: Literal["delete", "keep_latest"] = "delete"


class ThreadCreate(Body):
    """`POST /threads`."""

    thread_id: uuid.UUID | None = None
    metadata: dict[str, Any] | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"
    supersteps: list[Any] | None = None
    ttl: ThreadTtl | None = None

    @model_validator(mode="after")
    def _no_supersteps(self) -> ThreadCreate:
        if self.supersteps:
            raise ValueError("supersteps are not supported; create the thread, then run it")
        return self


class ThreadPatch(Body):
    """`PATCH /threads/{thread_id}`: metadata merged into the thread's, a new TTL."""

    metadata: dict[str, Any] = Field(default_factory=dict)
    ttl: ThreadTtl | None = None


class ThreadCount(Body):
    """`POST /threads/count`: the filters of a search."""

    ids: list[str] | None = None
    metadata: dict[str, Any] | None = None
    values: dict[str, Any] | None = None
    status: ThreadStatusFilter | None = None


class ThreadSearch(ThreadCount):
    """`POST /threads/search`."""

    limit: int = Field(default=10, ge=1, le=1000)
    offset: int = Field(default=0, ge=0)
    sort_by: Literal["thread_id", "created_at", "updated_at", "state_updated_at", "status"] = (
        "updated_at"
    )
    sort_order: Literal["asc", "desc", "ASC", "DESC"] = "desc"
    select: list[ThreadField] | None = None


class HistoryRequest(Body):
    """`POST /threads/{thread_id}/history`.

    `before` as LangGraph's server takes it, a config (`{"configurable": {"checkpoint_id":
    ...}}`), and as the SDK's type says, a checkpoint id or a checkpoint.
    """

    limit: int = Field(default=10, ge=1, le=1000)
    before: str | CheckpointRef | None = None
    metadata: dict[str, Any] | None = None
    checkpoint: CheckpointRef | None = None

    @model_validator(mode="before")
    @classmethod
    def _before_as_config(cls, data: Any) -> Any:
        before = data.get("before") if isinstance(data, dict) else None
        if isinstance(before, dict) and isinstance(before.get("configurable"), dict):
            return {**data, "before": before["configurable"]}
        return data


class RunsCancel(Body):
    """`POST /runs/cancel`.

    The runs `run_ids` of `thread_id` (all its active runs without ids), or every run of
    a `status`, whichever thread.
    """

    thread_id: str | None = None
    run_ids: list[str] | None = None
    status: Literal["pending", "running", "all"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _status_in_any_case(cls, data: Any) -> Any:
        status = data.get("status") if isinstance(data, dict) else None
        return {**data, "status": status.lower()} if isinstance(status, str) else data

    @model_validator(mode="after")
    def _one_way(self) -> RunsCancel:
        if self.status is not None and (self.thread_id or self.run_ids):
            raise ValueError("give a status, or a thread_id (and run_ids), not both")
        if self.status is None and not self.thread_id:
            raise ValueError("give a status, or a thread_id (and run_ids)")
        return self


class StateAtCheckpoint(Body):
    """`POST /threads/{thread_id}/state/checkpoint`: the SDK's `get_state(checkpoint=...)`."""

    checkpoint: CheckpointRef
    subgraphs: bool = False
    """Accepted: DuckLM's graph has no subgraphs, so the state is the same either way."""
    select: list[str] | None = None
    """Accepted and not applied: the whole state is answered (as `GET .../state`)."""


class StateUpdate(Body):
    """`POST /threads/{thread_id}/state`."""

    values: dict[str, Any] | list[dict[str, Any]] | None = None
    as_node: str | None = None
    checkpoint: CheckpointRef | None = None
    checkpoint_id: str | None = None


class RunCommand(Body):
    """A run's `command`: resume an interrupt, update the state, go to nodes."""

    resume: Any = None
    update: dict[str, Any] | list[tuple[str, Any]] | None = None
    goto: str | list[str] | None = None


class RunSwitches(Body):
    """A run's `context`: DuckLM's per-run switches (`None` keeps a paused turn's)."""

    critic: bool | None = None
    memory: bool | None = None


class RunConfig(Body):
    """The parts of a run's `config` DuckLM honours."""

    recursion_limit: int | None = Field(default=None, ge=1)
    tags: list[str] | None = None


class RunCreate(Body):
    """`POST /threads/{thread_id}/runs/{stream,wait}` and `/runs/{stream,wait}`."""

    assistant_id: str
    input: dict[str, Any] | None = None
    command: RunCommand | None = None
    stream_mode: StreamMode | list[StreamMode] = "values"
    metadata: dict[str, Any] | None = None
    config: RunConfig | None = None
    context: RunSwitches | None = None
    checkpoint_id: str | None = None
    checkpoint: CheckpointRef | None = None
    interrupt_before: Literal["*"] | list[str] | None = None
    interrupt_after: Literal["*"] | list[str] | None = None
    if_not_exists: Literal["reject", "create"] = "reject"
    on_disconnect: Literal["cancel", "continue"] = "continue"
    on_completion: Literal["delete", "keep"] = "delete"
    multitask_strategy: MultitaskStrategy = "reject"
    stream_resumable: bool = False
    """Keep the run's events after its end, for a late joiner (`streaming/joining.py`)."""
    stream_subgraphs: bool = False
    """Stream subgraphs' chunks too, as `mode|namespace` events (`streaming/events.py`)."""
    webhook: str | None = Field(default=None, min_length=1)
    """Where the run's outcome is POSTed when it ends (`webhooks/`)."""

    @model_validator(mode="after")
    def _command_wins(self) -> RunCreate:
        # agent-chat-ui resumes with `{"input": {}, "command": {...}}`; LangGraph's server
        # runs the command and ignores the input, so this door does too.
        if self.command is not None:
            self.input = None
        return self

    def stream_modes(self) -> tuple[StreamMode, ...]:
        """The requested stream modes, each once, in order."""
        modes = [self.stream_mode] if isinstance(self.stream_mode, str) else self.stream_mode
        return tuple(dict.fromkeys(modes))
