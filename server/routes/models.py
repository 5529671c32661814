"""Model roles and whether their servers answer."""

from __future__ import annotations

import asyncio
from dataclasses import asdict

from fastapi import APIRouter

from ducklm.models.ping import ping_model_server
from ducklm.models.roles import ROLE_NAMES
from ducklm.server.deps import Duck
from ducklm.server.responses import RoleView, ServerCheck

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
        ServerCheck(**asdict(check), base_url=url) for url, check in zip(urls, checks, strict=True)
    ]
