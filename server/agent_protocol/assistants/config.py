"""What an assistant's configuration means to a DuckLM run.

An assistant is a named DuckLM configuration for the one graph. A run that names it
gets, where the run's own request says nothing:

- `context.critic`, `context.memory` (booleans): DuckLM's per-run switches;
- `context.workspace` (a folder the person allowed, DUCK_WORKSPACE or DUCK_WORKSPACES):
  the workspace of a run with new input that names none;
- `config.recursion_limit` and `config.tags`, as a run's own `config`.

`context` and `config.configurable` are one thing, kept equal as the LangGraph server
keeps them. Any other key is stored and shown but ignored at run time: DuckLM's model
roles, tools and skills are the server's (settings, `DUCK_*`), shared by every run; an
assistant cannot change them. Checked when written: a wrong type or a workspace that is
not allowed is a `422`.
"""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import HTTPException
from pydantic import BaseModel, ConfigDict, StrictBool, ValidationError

from ducklm.config.settings import Settings
from ducklm.server.agent_protocol.common.identity import GRAPH_ID, is_assistant
from ducklm.server.agent_protocol.common.schemas import RunConfig, RunCreate, RunSwitches
from ducklm.server.agent_protocol.common.workspace import allowed_values
from ducklm.server.agent_protocol.threads.catalog import GRAPH_METADATA
from ducklm.stores.agent_protocol.assistants import AssistantStore, AssistantVersion

BOTH = (
    "Cannot specify both configurable and context. Prefer setting context alone. Context "
    "was introduced in LangGraph 0.6.0 and is the long term planned replacement for "
    "configurable."
)
NOT_FOUND = "assistant {assistant_id} not found: use {graph!r} or an assistant's id"


class AssistantContext(BaseModel):
    """The keys of an assistant's `context` DuckLM honours (others are kept, unused)."""

    model_config = ConfigDict(extra="allow")

    critic: StrictBool | None = None
    memory: StrictBool | None = None
    workspace: str | None = None


async def checked_configuration(
    config: dict[str, Any] | None, context: dict[str, Any] | None, settings: Settings
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`(config, context)` as stored: checked, and `configurable` equal to `context`.

    Raises:
        HTTPException: 400 for both `configurable` and `context`, 422 for a wrong value.
        WorkspaceError: A workspace that is not an allowed folder (a 422).
    """
    config, context = dict(config or {}), dict(context or {})
    if config.get("configurable") and context:
        raise HTTPException(400, BOTH)
    context = dict(config.get("configurable") or context)
    if context:
        config["configurable"] = context
    for where, model, value in (
        ("config", RunConfig, config),
        ("context", AssistantContext, context),
    ):
        try:
            model.model_validate(value)
        except ValidationError as exc:
            raise HTTPException(422, _said(where, exc)) from None
    return config, await allowed_values(context, settings)


async def run_assistant(assistant_id: str, store: AssistantStore) -> AssistantVersion | None:
    """The stored assistant a run names, or `None` for the graph's own one.

    Raises:
        HTTPException: 404 when `assistant_id` names neither.
    """
    if is_assistant(assistant_id):
        return None
    key = _uuid(assistant_id)
    found = await store.get(key) if key else None
    if found is None:
        raise HTTPException(404, NOT_FOUND.format(assistant_id=assistant_id, graph=GRAPH_ID))
    return found.current


def graph_metadata(assistant: AssistantVersion | None) -> dict[str, Any]:
    """What a thread's metadata says of the graph and assistant its run used."""
    if assistant is None:
        return GRAPH_METADATA
    return {**GRAPH_METADATA, "assistant_id": assistant.assistant_id}


def with_assistant(body: RunCreate, assistant: AssistantVersion | None) -> RunCreate:
    """`body` with the assistant's configuration wherever the request set nothing."""
    if assistant is None:
        return body
    stored = AssistantContext.model_validate(assistant.context)
    own = body.context or RunSwitches()
    context = RunSwitches(
        critic=own.critic if own.critic is not None else stored.critic,
        memory=own.memory if own.memory is not None else stored.memory,
    )
    defaults = RunConfig.model_validate(assistant.config)
    mine = body.config or RunConfig()
    config = RunConfig(
        recursion_limit=mine.recursion_limit or defaults.recursion_limit,
        tags=mine.tags if mine.tags is not None else defaults.tags,
    )
    values = body.input
    if values is not None and stored.workspace and "workspace" not in values:
        values = {**values, "workspace": stored.workspace}
    return body.model_copy(update={"context": context, "config": config, "input": values})


def _uuid(text: str) -> str | None:
    try:
        return str(uuid.UUID(text))
    except ValueError:
        return None


def _said(where: str, exc: ValidationError) -> str:
    first = exc.errors()[0]
    return ".".join([where, *(str(part) for part in first["loc"])]) + f": {first['msg']}"
