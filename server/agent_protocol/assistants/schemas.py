"""Request bodies of the assistant routes, with the LangGraph server's names and defaults."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import Field

from ducklm.server.agent_protocol.common.schemas import Body

AssistantField = Literal[
    "assistant_id",
    "graph_id",
    "name",
    "description",
    "config",
    "context",
    "metadata",
    "version",
    "created_at",
    "updated_at",
]


class AssistantCount(Body):
    """`POST /assistants/count`: the filters of a search."""

    graph_id: str | None = None
    name: str | None = None
    metadata: dict[str, Any] | None = None


class AssistantSearch(AssistantCount):
    """`POST /assistants/search`."""

    limit: int = Field(default=10, ge=1, le=1000)
    offset: int = Field(default=0, ge=0)
    sort_by: Literal["assistant_id", "graph_id", "name", "created_at", "updated_at"] | None = None
    sort_order: Literal["asc", "desc", "ASC", "DESC"] | None = None
    select: list[AssistantField] | None = None


class AssistantPatch(Body):
    """`PATCH /assistants/{assistant_id}`: what changes (metadata is merged)."""

    graph_id: str | None = None
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    name: str | None = None
    description: str | None = None


class AssistantCreate(AssistantPatch):
    """`POST /assistants`."""

    graph_id: str
    assistant_id: uuid.UUID | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"


class AssistantVersions(Body):
    """`POST /assistants/{assistant_id}/versions`."""

    metadata: dict[str, Any] | None = None
    limit: int = Field(default=10, ge=1, le=1000)
    offset: int = Field(default=0, ge=0)


class AssistantLatest(Body):
    """`POST /assistants/{assistant_id}/latest`."""

    version: int = Field(ge=1)
