"""The JSONL export's lines: one JSON object per line, told apart by `type`.

The first line is the `conversation` header; then, per message of the person, its
`message` lines (user, then assistant and tool, in order) followed by the turn's
records: each tool `call` with how it was decided, each `question` asked, each audited
`event`, and the turn's `outcome`. An export of all versions ends with one `version`
line per version not shown (`index`, `of`, and its `lines`, written as above). An import
reads the top-level `message` lines (the version shown) into history and
checks the rest only for their `type`: they are the record of what happened, and
nothing read from a file is run again.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FORMAT = "ducklm.conversation"
MAX_ID = 200
MAX_TITLE = 500
RECORD_TYPES = ("call", "question", "event", "outcome", "version")


class _Line(BaseModel):
    # Unknown fields are refused in what an import reads: a typo is said, not dropped.
    model_config = ConfigDict(extra="forbid")


class HeaderLine(_Line):
    """The first line: what the file is and which conversation it was."""

    type: Literal["conversation"] = "conversation"
    format: Literal["ducklm.conversation"] = "ducklm.conversation"
    version: Literal[1] = 1
    id: str = Field(default="", max_length=MAX_ID)
    """The exported conversation's id (an import makes a new one)."""
    title: str = Field(default="", max_length=MAX_TITLE)
    workspace: str | None = None
    """Where it worked, for the record (an import works in an allowed workspace of its own)."""
    created_at: float | None = None
    updated_at: float | None = None
    exported_at: float | None = None


class ToolCallLine(_Line):
    """A tool call an assistant message made."""

    id: str = Field(min_length=1, max_length=MAX_ID)
    name: str = Field(min_length=1, max_length=MAX_ID)
    args: dict[str, Any] = Field(default_factory=dict)


class MessageLine(_Line):
    """One message of the conversation."""

    type: Literal["message"] = "message"
    role: Literal["user", "assistant", "tool"]
    content: str
    tool_calls: list[ToolCallLine] = Field(default_factory=list)
    """An assistant message's calls."""
    tool_call_id: str | None = Field(default=None, max_length=MAX_ID)
    """A tool message: the call it answers."""
    name: str | None = Field(default=None, max_length=MAX_ID)
    status: Literal["success", "error"] | None = None
    task_id: str | None = Field(default=None, max_length=MAX_ID)
    """The task a user message started, when recorded."""
    working: bool = False
    """An assistant message whose text is not an answer (a plan step's result)."""


class RecordLine(BaseModel):
    """A `call`, `question`, `event`, `outcome` or `version` line: kept as written."""

    model_config = ConfigDict(extra="allow")

    type: Literal["call", "question", "event", "outcome", "version"]
    task_id: str | None = None
