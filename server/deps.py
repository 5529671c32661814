"""What routes get from the app, as `Annotated` dependencies."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from ducklm.runtime import DuckLM
from ducklm.server.tasks import TaskHub


def get_duck(request: Request) -> DuckLM:
    """The open runtime the lifespan created."""
    duck: DuckLM = request.app.state.duck
    return duck


def get_hub(request: Request) -> TaskHub:
    """The task hub the lifespan created."""
    hub: TaskHub = request.app.state.hub
    return hub


Duck = Annotated[DuckLM, Depends(get_duck)]
Hub = Annotated[TaskHub, Depends(get_hub)]
