"""Each tool's arguments, typed once at the edge; their JSON schemas are what callers read.

Field descriptions are written for the calling agent: they are its only documentation.
"""

from __future__ import annotations

from pydantic import Field, ValidationError

from ducklm.memory.records import Scope
from ducklm.server.schemas import MAX_ID_LENGTH, Body, Workspace

MAX_WAIT_S = 120.0
"""The longest `chat_status` waits for a running turn (a call must come back)."""

ThreadId = Field(
    default=None,
    min_length=1,
    max_length=MAX_ID_LENGTH,
    description="A DuckLM conversation (thread) id; omit it to start a new conversation.",
)
WorkspaceField = Field(
    default=None,
    description="An absolute folder the person allowed (DUCK_WORKSPACE, a DUCK_WORKSPACES "
    "folder or one inside them); omit it for the conversation's own or the default one.",
)


class ChatArgs(Body):
    """`chat`: one DuckLM turn."""

    message: str = Field(min_length=1, max_length=100_000, description="What to ask DuckLM.")
    thread_id: str | None = ThreadId
    workspace: Workspace = WorkspaceField
    critic: bool = Field(default=True, description="Let DuckLM's critic review the answer.")
    memory: bool = Field(default=True, description="Let DuckLM remember what it learns.")


class ChatStatusArgs(Body):
    """`chat_status`: where the latest turn of a conversation is."""

    thread_id: str = Field(
        min_length=1, max_length=MAX_ID_LENGTH, description="The conversation's id."
    )
    wait_s: float = Field(
        default=0.0,
        ge=0.0,
        le=MAX_WAIT_S,
        description="Seconds to wait for a running or waiting turn to end before answering.",
    )


class MemorySearchArgs(Body):
    """`memory_search`: DuckLM's long-term memory, searched."""

    query: str = Field(min_length=1, max_length=2000, description="What to look for.")
    workspace: Workspace = WorkspaceField
    thread_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ID_LENGTH,
        description="Also search the memories of this conversation.",
    )
    k: int = Field(default=5, ge=1, le=50, description="How many memories at most.")


class MemoryAddArgs(Body):
    """`memory_add`: one memory stored as it is."""

    text: str = Field(min_length=1, max_length=10_000, description="One short statement.")
    scope: Scope | None = Field(
        default=None,
        description="global (about the person), workspace (about a project) or "
        "conversation; omitted, DuckLM picks it.",
    )
    workspace: Workspace = WorkspaceField
    thread_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ID_LENGTH,
        description="The conversation a `conversation` memory belongs to.",
    )
    memory_type: str = Field(
        default="fact", min_length=1, max_length=50, description="fact, preference, event..."
    )
    importance: float = Field(default=0.5, ge=0.0, le=1.0, description="0..1, how much it matters.")


def first_problem(exc: ValidationError) -> str:
    """One sentence naming the first argument that is wrong and why."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "arguments"
    return f"invalid argument {where!r}: {error['msg']}"
