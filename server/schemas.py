"""Request bodies and parameters, checked before a route runs.

Unknown fields are refused, so a typo is an error, not a silent no-op; ids and numbers
are bounded, so a wild value is a 422, not a database error.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import BaseModel, ConfigDict, Field

from ducklm.memory.records import Scope
from ducklm.stores.db import MAX_ROW_ID
from ducklm.tools.hitl import (
    Decision,
    Decisions,
    ElicitAction,
    ElicitAnswer,
    FormValue,
    PasswordAnswer,
    PasswordRefusal,
)

MAX_ID_LENGTH = 200
"""Ids are UUIDs or short names; a longer one names nothing."""
MAX_PATH_LENGTH = 4096
"""PATH_MAX on Linux: a longer workspace path names no folder."""

Id = Annotated[str, Path(min_length=1, max_length=MAX_ID_LENGTH)]
"""A string id in the path (task, conversation, memory, skill, approval)."""
RowId = Annotated[int, Path(ge=1, le=MAX_ROW_ID)]
"""An integer id in the path (an approval rule)."""
Seq = Annotated[int, Query(ge=0, le=MAX_ROW_ID)]
"""A position in a thread's audit log."""
Workspace = Annotated[str | None, Field(max_length=MAX_PATH_LENGTH)]
"""A folder a request names: DUCK_WORKSPACE, a DUCK_WORKSPACES folder, or one inside them."""


class Body(BaseModel):
    """Base of every request body."""

    model_config = ConfigDict(extra="forbid")


class ChatRequest(Body):
    """A message to run as a new task."""

    message: str = Field(min_length=1, max_length=100_000)
    conversation_id: str | None = Field(default=None, min_length=1, max_length=MAX_ID_LENGTH)
    workspace: Workspace = None
    critic: bool = True
    memory: bool = True
    expand: bool = True
    """Run a leading `/server:prompt` and attach each `@server:uri` of a configured MCP
    server; false sends the text as it is."""


class ContinueRequest(Body):
    """Decisions for the question a task waits at, one per action, in order."""

    decisions: list[Decision] = Field(min_length=1)
    """Typed here, at the edge, and handed on unchanged (`tools/hitl.py`)."""
    interrupt_id: str | None = None
    critic: bool | None = None
    memory: bool | None = None

    def answer(self) -> Decisions:
        """The decisions as the one answer type every door hands the runtime."""
        return Decisions(decisions=self.decisions)


class PasswordBody(Body):
    """The sudo password, or a refusal to give it."""

    password: str | None = Field(default=None, min_length=1)
    cancel: bool = False

    def answer(self) -> PasswordAnswer | PasswordRefusal:
        """The answer this body gives.

        Raises:
            ValueError: It gives both or neither.
        """
        if self.cancel == (self.password is not None):
            raise ValueError('send either {"password": "..."} or {"cancel": true}')
        return (
            PasswordRefusal() if self.password is None else PasswordAnswer(password=self.password)
        )


class ElicitBody(Body):
    """The answer to an MCP server's question (an elicitation form, or sampling)."""

    action: ElicitAction
    content: dict[str, FormValue] | None = None
    interrupt_id: str | None = None

    def answer(self) -> ElicitAnswer:
        """The answer this body gives.

        Raises:
            ValueError: Content with an action other than accept.
        """
        return ElicitAnswer(action=self.action, content=self.content)


class NewConversation(Body):
    """A conversation to create."""

    title: str = Field(default="", max_length=200)
    workspace: Workspace = None


class ConversationPatch(Body):
    """A new title."""

    title: str = Field(min_length=1, max_length=200)


class NewMemoryBody(Body):
    """A memory to store."""

    text: str = Field(min_length=1, max_length=10_000)
    scope: Scope | None = None
    workspace: Workspace = None
    conversation_id: str | None = Field(default=None, max_length=MAX_ID_LENGTH)
    memory_type: str = Field(default="fact", min_length=1, max_length=50)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
