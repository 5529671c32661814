"""The door's ways to name a workspace, held to the one rule of `ducklm.kit.workspaces`.

A run's `input`, its `command.update` and a `POST /threads/{id}/state` may each set the
state's `workspace` (`InputState.workspace`); whatever they set must be a folder the
person allowed (DUCK_WORKSPACE, DUCK_WORKSPACES), else the request is a `422`. An empty
string keeps its meaning there: the configured workspace.
"""

from __future__ import annotations

from typing import Any

from ducklm.config.settings import Settings
from ducklm.kit.workspaces import WorkspaceError, requested_workspace

FIELD = "workspace"
NOT_TEXT = "workspace must be a string: a folder in DUCK_WORKSPACE or DUCK_WORKSPACES"


async def allowed_values(values: Any, settings: Settings) -> Any:
    """`values` with any `workspace` in it checked and resolved.

    Args:
        values: A state update as the door takes it: a dict, a list of dicts, a list of
            `(key, value)` pairs (a command's `update`), or `None`.
        settings: Where the allowed folders come from.

    Raises:
        WorkspaceError: A `workspace` that is not a string or not an allowed folder.
    """
    if isinstance(values, dict):
        if FIELD not in values:
            return values
        return {**values, FIELD: await _allowed(values[FIELD], settings)}
    if isinstance(values, list):
        return [await _allowed_item(item, settings) for item in values]
    return values


async def _allowed_item(item: Any, settings: Settings) -> Any:
    if isinstance(item, (list, tuple)) and len(item) == 2 and item[0] == FIELD:
        return (FIELD, await _allowed(item[1], settings))
    return await allowed_values(item, settings)


async def _allowed(value: Any, settings: Settings) -> str:
    if not isinstance(value, str):
        raise WorkspaceError(NOT_TEXT)
    return await requested_workspace(settings, value) or value
