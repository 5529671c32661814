"""Request bodies. Unknown fields are refused, so a typo is an error, not a silent no-op."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ducklm.memory.records import Scope

DecisionName = Literal["approve", "edit", "reject", "allow_forever"]


class Body(BaseModel):
    """Base of every request body."""

    model_config = ConfigDict(extra="forbid")


class ChatRequest(Body):
    """A message to run as a new task."""

    message: str = Field(min_length=1, max_length=100_000)
    conversation_id: str | None = Field(default=None, min_length=1, max_length=200)
    workspace: str | None = None
    critic: bool = True
    memory: bool = True


class EditedAction(Body):
    """The replacement call of an `edit` decision."""

    name: str
    args: dict[str, Any]


class DecisionBody(Body):
    """A person's answer to one action request."""

    type: DecisionName
    message: str | None = None
    edited_action: EditedAction | None = None

    def as_decision(self) -> dict[str, Any]:
        """The decision as the graph takes it (no empty fields)."""
        return self.model_dump(exclude_none=True)


class ContinueRequest(Body):
    """Decisions for the question a task waits at, one per action, in order."""

    decisions: list[DecisionBody] = Field(min_length=1)
    interrupt_id: str | None = None
    critic: bool | None = None
    memory: bool | None = None


class PasswordBody(Body):
    """The sudo password, or a refusal to give it."""

    password: str | None = Field(default=None, min_length=1)
    cancel: bool = False


class NewConversation(Body):
    """A conversation to create."""

    title: str = Field(default="", max_length=200)
    workspace: str | None = None


class ConversationPatch(Body):
    """A new title."""

    title: str = Field(min_length=1, max_length=200)


class NewMemoryBody(Body):
    """A memory to store."""

    text: str = Field(min_length=1, max_length=10_000)
    scope: Scope | None = None
    workspace: str | None = None
    conversation_id: str | None = None
    memory_type: str = Field(default="fact", min_length=1, max_length=50)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
