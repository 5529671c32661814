"""Response bodies of `/v1` and `/health`, and the error answers each route documents.

Stored records that are already dataclasses (`Conversation`, `ApprovalRule`,
`MemoryRecord`, `ExperienceRecord`) are answered as they are; the models here are the
shapes that exist only on the wire. FastAPI checks every answer against its model, so
the OpenAPI document cannot drift from what the server sends.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from fastapi import status
from pydantic import BaseModel, ConfigDict, Field

from ducklm.kit.events import EventType, RunStatus
from ducklm.learning.skills import Skill
from ducklm.memory.records import Scope
from ducklm.models.answer_stream import CutReason
from ducklm.models.roles import RoleName, StructuredOutput, ToolMode
from ducklm.stores.tasks import TaskStatus
from ducklm.tools.sandbox.runner import Protection


class ProblemItem(BaseModel):
    """One field that did not validate."""

    loc: list[str | int]
    msg: str


class Problem(BaseModel):
    """Every error: a sentence for people (`errors` lists the fields of a `422`)."""

    detail: str
    errors: list[ProblemItem] | None = None


_MEANINGS = {
    status.HTTP_400_BAD_REQUEST: "The body is not JSON, or the Host header is not this server.",
    status.HTTP_401_UNAUTHORIZED: "The access token is missing or wrong.",
    status.HTTP_403_FORBIDDEN: "A state-changing request from another site's page.",
    status.HTTP_404_NOT_FOUND: "Nothing has that id.",
    status.HTTP_409_CONFLICT: "The thing is busy, or not in the state the request needs.",
    status.HTTP_413_CONTENT_TOO_LARGE: "The body is larger than DUCK_MAX_BODY_BYTES.",
    status.HTTP_422_UNPROCESSABLE_CONTENT: "A field, parameter or workspace is not acceptable.",
    status.HTTP_502_BAD_GATEWAY: "A server DuckLM reaches (an MCP or authorization server) failed.",
    status.HTTP_503_SERVICE_UNAVAILABLE: "The store the route needs is not open.",
}
GUARDED = (400, 401, 403, 413, 422)
"""What any route behind the token and the Host/Origin/size checks may answer."""


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The `responses=` entries documenting `codes` with the `Problem` body."""
    return {code: {"model": Problem, "description": _MEANINGS[code]} for code in codes}


class EventView(BaseModel):
    """A run event (`ducklm.kit.events`): its `type` and that type's own fields."""

    model_config = ConfigDict(extra="allow")

    # Plain text, not the `EventType` literal: an audit log written by an older DuckLM
    # may hold types this one no longer emits, and showing it must not fail.
    type: str = Field(examples=list(get_args(EventType)))


def event_stream_doc(
    description: str, data: dict[str, Any] | None = None
) -> dict[int | str, dict[str, Any]]:
    """The `responses=` entry of a route answering `text/event-stream`.

    Args:
        description: What the stream carries.
        data: The JSON schema of each event's `data`; DuckLM's run events by default.
    """
    # One SSE event per item, as OpenAPI 3.2 describes streams: `data` holds JSON.
    event = {
        "type": "object",
        "properties": {
            "event": {"type": "string"},
            "id": {"type": "string"},
            "data": {
                "type": "string",
                "contentMediaType": "application/json",
                "contentSchema": data if data is not None else EventView.model_json_schema(),
            },
        },
    }
    return {
        status.HTTP_200_OK: {
            "description": description,
            "content": {"text/event-stream": {"schema": event}},
        }
    }


class TaskView(BaseModel):
    """A task, with the question it waits at (if it does)."""

    task_id: str
    conversation_id: str
    status: TaskStatus
    message: str
    started_at: float
    finished_at: float | None
    answer: str | None
    error: str | None
    pending: list[EventView]


class ChatOutcome(BaseModel):
    """How a `POST /v1/chat` run ended, with its events."""

    task_id: str
    conversation_id: str
    status: RunStatus
    answer: str
    pending: list[EventView]
    """The questions it stopped at (`approval_requested`, `password_requested`)."""
    events: list[EventView]


class TaskStatusView(BaseModel):
    """A task's status after a request changed it."""

    task_id: str
    status: str
    """`running`, `cancelled`, or (cancelled from another server) its final status."""


class ToolCallView(BaseModel):
    """A tool call of an assistant message."""

    id: str | None
    name: str
    args: dict[str, Any]


class MessageView(BaseModel):
    """A message as the web chat shows it."""

    role: Literal["user", "assistant", "tool"]
    content: str
    tool_calls: list[ToolCallView] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    status: str | None = None
    cut: CutReason | None = None
    """An answer DuckLM cut: `repeating` (ended as it repeated itself) or `length`."""
    working: bool = False
    """Its text is the turn's working (a plan step's result), not an answer: the chat
    shows it in the plan, never as the answer (`ducklm.models.answer_stream.WORKING_KEY`)."""
    reasoning: str | None = None
    """What the model reasoned before this message, kept apart from its text (LangChain's
    `additional_kwargs.reasoning_content`): what the live `reasoning` events' `text` showed."""


class ConversationDetail(BaseModel):
    """A conversation with its messages and the task still open in it."""

    id: str
    title: str
    workspace: str | None
    created_at: float
    updated_at: float
    messages: list[MessageView]
    active_task: TaskView | None


class PendingApproval(BaseModel):
    """A question waiting for a person."""

    id: str
    kind: Literal["approval", "password"]
    task_id: str
    conversation_id: str
    message: str
    request: dict[str, Any]
    """The LangChain HITL request (`action_requests`, `review_configs`)."""


class SkillProblemView(BaseModel):
    """A skill file that was skipped, and why."""

    path: str
    message: str


class SkillsView(BaseModel):
    """The skills that loaded, and those that did not."""

    skills: list[Skill]
    problems: list[SkillProblemView]


class MemoryHitView(BaseModel):
    """A memory found by a search, with its scores."""

    id: str
    text: str
    scope: Scope
    workspace: str | None
    conversation_id: str | None
    memory_type: str
    importance: float
    created_at: float
    updated_at: float
    superseded_by: str | None
    metadata: dict[str, Any] = Field(default_factory=dict)
    score: float
    vector_score: float | None
    keyword_score: float | None


class MemorySearchView(BaseModel):
    """What a memory search found; `degraded` when only keywords could be used."""

    hits: list[MemoryHitView]
    degraded: bool
    warning: str | None


class RoleView(BaseModel):
    """A model role's settings (never its API key or prompt)."""

    name: RoleName
    model: str
    base_url: str
    temperature: float
    max_output_tokens: int
    timeout_s: float
    structured_output: StructuredOutput
    tool_mode: ToolMode


class FindingView(BaseModel):
    """Whether a server accepts one thing (`ducklm.models.capabilities.Finding`)."""

    works: bool | None
    """None while unknown."""
    how: str
    """How DuckLM knows: what the server said of itself, or its words on refusing."""


class CapabilitiesView(BaseModel):
    """What DuckLM found one model server accepts, and what it seems to be."""

    server: str
    found: dict[str, FindingView]
    """By feature: native_tools, json_schema, grammar, include_usage, props, tokenize,
    reasoning."""
    template_opens: bool | None = None
    """The chat template opens `<think>` in the prompt, as the server rendered it; None
    when it cannot render it."""


class ServerCheck(BaseModel):
    """Whether one model server answers, and what to do if not."""

    name: str
    ok: bool
    detail: str
    fix: str
    base_url: str
    capabilities: CapabilitiesView | None = None
    """What DuckLM found it accepts; None until a turn first used it."""


class HealthChecks(BaseModel):
    """The checks behind `/health`."""

    model_servers: list[ServerCheck]
    embeddings: str = "cold"
    """The embedding model: `loading` (turns go on without recall meanwhile), `ready`,
    `failed: <why>`, or `cold` (not warmed up: it loads at the first turn that needs it)."""


class Health(BaseModel):
    """Whether DuckLM is up and its model servers answer."""

    status: Literal["ok", "degraded"]
    checks: HealthChecks


class StatusView(BaseModel):
    """What this server is and what it is doing."""

    version: str
    data_dir: str
    workspace: str
    workspaces: list[str]
    """The other folders a request may name as its workspace (DUCK_WORKSPACES)."""
    running_tasks: list[str]
    conversations: int
    sandbox: Protection


class McpServerView(BaseModel):
    """One MCP server: how DuckLM reaches it, whether its results are trusted, its state."""

    name: str
    transport: Literal["stdio", "http"]
    trust: Literal["untrusted", "trusted"]
    state: Literal["stopped", "running", "failed", "crashed"]
    tools: int
    error: str | None = None
    """Why it is not running (for failed and crashed), in words for people."""
    needs_sign_in: bool = False
    """Down for want of a person's OAuth sign-in: `POST .../connect` starts one."""


class McpServersView(BaseModel):
    """The enabled MCP servers of the config file."""

    servers: list[McpServerView]


class McpConnectView(BaseModel):
    """A sign-in started at an MCP server behind OAuth."""

    authorization_url: str | None
    """Open it in the person's browser; it comes back to `/v1/mcp/oauth/callback`.
    `None` when the server asked for no sign-in: it is connected already."""
