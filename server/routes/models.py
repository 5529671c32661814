"""Model roles and whether their servers answer."""

from __future__ import annotations

import asyncio
from dataclasses import asdict

from fastapi import APIRouter
from pydantic import BaseModel

from ducklm.models.ping import ping_model_server
from ducklm.models.roles import ROLE_NAMES
from ducklm.runtime.facade import DuckLM
from ducklm.runtime.model_choice import ServerStatus
from ducklm.server.deps import Duck
from ducklm.server.responses import CapabilitiesView, RoleView, ServerCheck

router = APIRouter(prefix="/models", tags=["models"])


@router.get("/roles")
async def roles(duck: Duck) -> list[RoleView]:
    """Each role's model, server and switches (never its API key)."""
    return [
        RoleView.model_validate(
            duck.context.models.config(role).model_dump(exclude={"api_key", "prompt"})
        )
        for role in ROLE_NAMES
    ]


@router.get("/ping")
async def ping(duck: Duck) -> list[ServerCheck]:
    """Each distinct model server: reachable or not, and what to do about it."""
    urls = sorted({duck.context.models.config(role).base_url for role in ROLE_NAMES})
    checks = await asyncio.gather(*(ping_model_server(url) for url in urls))
    return [
        ServerCheck(**asdict(check), base_url=url, capabilities=_found(duck, url))
        for url, check in zip(urls, checks, strict=True)
    ]


def _found(duck: DuckLM, url: str) -> CapabilitiesView | None:
    """What the turns found the server accepts (no probe here: a ping stays quick)."""
    found = duck.context.capabilities.known(url)
    return None if found is None else CapabilitiesView.model_validate(found.as_json())


class ModelServerView(BaseModel):
    """The answering roles' model server: its state and the models it offers."""

    base_url: str
    status: ServerStatus
    """up, loading (its model), restarting (DuckLM starts it again after a crash), down."""
    detail: str
    fix: str
    """What to do about it; empty when up, or when DuckLM is restarting it."""
    local: bool
    """Whether it is the local server `ducklm serve` started and keeps."""
    models: list[str]
    """The ids its `GET /models` lists: what a conversation may choose."""
    default: str
    """The configured model of the answering roles (thinker, action)."""


@router.get("/server")
async def model_server(duck: Duck) -> ModelServerView:
    """The model server the answers come from, for the web chat's header and picker."""
    return ModelServerView(**asdict(await duck.model_server()))
