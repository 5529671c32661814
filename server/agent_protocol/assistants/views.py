"""Assistants in the LangGraph server's shapes: the graph's own one and the stored ones."""

from __future__ import annotations

from typing import Any

from ducklm.server.agent_protocol.common.identity import ASSISTANT_ID, GRAPH_ID
from ducklm.server.agent_protocol.common.views import iso_time
from ducklm.stores.agent_protocol.assistants import AssistantRow, AssistantVersion

SYSTEM_DESCRIPTION = "DuckLM: a local agent over local OpenAI-compatible models."


def system_assistant(created_at: float) -> dict[str, Any]:
    """The graph's own assistant (`created_by: system`), never stored, at version 1."""
    return {
        "assistant_id": ASSISTANT_ID,
        "graph_id": GRAPH_ID,
        "name": GRAPH_ID,
        "description": SYSTEM_DESCRIPTION,
        "config": {},
        "context": {},
        "metadata": {"created_by": "system"},
        "version": 1,
        "created_at": iso_time(created_at),
        "updated_at": iso_time(created_at),
    }


def system_version(created_at: float) -> dict[str, Any]:
    """The graph's own assistant as its one version."""
    view = system_assistant(created_at)
    del view["updated_at"]
    return view


def assistant_view(row: AssistantRow) -> dict[str, Any]:
    """A stored assistant: its current version, the assistant's times."""
    return {
        **version_view(row.current),
        "created_at": iso_time(row.created_at),
        "updated_at": iso_time(row.updated_at),
    }


def version_view(version: AssistantVersion) -> dict[str, Any]:
    """One version of an assistant, as `POST /assistants/{id}/versions` lists it."""
    return {
        "assistant_id": version.assistant_id,
        "graph_id": version.graph_id,
        "name": version.name,
        "description": version.description,
        "config": version.config,
        "context": version.context,
        "metadata": version.metadata,
        "version": version.version,
        "created_at": iso_time(version.created_at),
    }
