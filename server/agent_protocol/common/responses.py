"""Response bodies of the Agent Protocol door, for its OpenAPI document.

The routes answer with `WireResponse` (LangGraph's own JSON encoding of messages and
interrupts), so FastAPI does not check these models against each answer: the API tests
do, by fuzzing the door against this document (tests/api/test_fuzz.py). Shapes follow
the LangGraph server's OpenAPI (`Assistant`, `Thread`, `ThreadState`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ducklm.server.agent_protocol.common.views import ThreadStatus
from ducklm.server.agent_protocol.runs.views import RunStatus


class Info(BaseModel):
    """What this server is (`GET /info`)."""

    version: str
    langgraph_py_version: str
    flags: dict[str, bool]
    host: dict[str, str | None]


class AssistantVersionView(BaseModel):
    """One version of an assistant (a named configuration of the graph `ducklm`)."""

    assistant_id: str
    graph_id: str
    name: str
    description: str | None
    config: dict[str, Any]
    context: dict[str, Any]
    metadata: dict[str, Any]
    version: int
    created_at: str


class Assistant(AssistantVersionView):
    """An assistant: the graph's own one, or a client's, at its current version."""

    updated_at: str


class AssistantGraph(BaseModel):
    """The graph as Studio draws it."""

    model_config = ConfigDict(extra="allow")

    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]


class GraphSchemas(BaseModel):
    """A graph's JSON schemas (`None` where LangGraph cannot build one)."""

    input_schema: dict[str, Any] | None
    output_schema: dict[str, Any] | None
    state_schema: dict[str, Any] | None
    config_schema: dict[str, Any] | None
    context_schema: dict[str, Any] | None


class AssistantSchemas(GraphSchemas):
    """The assistant's graph and its JSON schemas."""

    graph_id: str


class ThreadTtlView(BaseModel):
    """A thread's time to live (`GET /threads/{id}?include=ttl`)."""

    strategy: str
    ttl_minutes: float
    expires_at: str


class InterruptView(BaseModel):
    """An open question of a thread: its id and payload."""

    id: str
    value: Any
    response_schema: Any = None


class RunFailure(BaseModel):
    """How a run failed: the exception's class name and a message for people."""

    error: str
    message: str


class Thread(BaseModel):
    """A thread: ids, times, metadata, status, current values and open interrupts."""

    thread_id: str
    created_at: str
    updated_at: str
    state_updated_at: str
    metadata: dict[str, Any]
    status: ThreadStatus
    config: dict[str, Any]
    values: dict[str, Any] | None
    interrupts: dict[str, list[InterruptView]]
    error: RunFailure | None
    ttl: ThreadTtlView | None = None
    """Only with `include=ttl`, and only on a thread that has one."""


class SelectedThread(Thread):
    """A thread of `POST /threads/search`: only the fields `select` names (all without it)."""

    # Never built (the route answers with `WireResponse`): only its schema is used.
    model_config = ConfigDict(json_schema_extra=lambda schema: schema.pop("required", None))


class CheckpointView(BaseModel):
    """Which checkpoint of which thread."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    checkpoint_map: dict[str, Any] | None = None


class StateTask(BaseModel):
    """A step that runs next (or failed, or asked a question) at a checkpoint."""

    id: str
    name: str
    path: list[Any]
    error: RunFailure | None
    interrupts: list[InterruptView]
    checkpoint: None
    state: None
    result: Any = None


class ThreadState(BaseModel):
    """A thread's state at one checkpoint."""

    values: dict[str, Any] | list[Any]
    next: list[str]
    tasks: list[StateTask]
    metadata: dict[str, Any] | None
    created_at: str | None
    checkpoint: CheckpointView | None
    parent_checkpoint: CheckpointView | None
    interrupts: list[InterruptView]
    checkpoint_id: str | None
    parent_checkpoint_id: str | None


class StateWritten(BaseModel):
    """The checkpoint a state update wrote."""

    checkpoint: CheckpointView | None


class WaitedValues(BaseModel):
    """What `runs/wait` answers: the run's last values.

    At a question, the state with `__interrupt__`; after a failure,
    `{"__error__": {"error", "message"}}`. Newlines may come first while the run goes.
    """

    model_config = ConfigDict(extra="allow")


class Run(BaseModel):
    """A run: ids, times, status, the client's metadata and request, its strategy."""

    run_id: str
    thread_id: str
    assistant_id: str
    created_at: str
    updated_at: str
    status: RunStatus
    metadata: dict[str, Any]
    kwargs: dict[str, Any]
    multitask_strategy: str
