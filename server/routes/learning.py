"""Skills and the critic's experience records."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, status

from ducklm.server.deps import Duck

router = APIRouter(tags=["learning"])


@router.get("/skills")
async def list_skills(duck: Duck) -> dict[str, Any]:
    """The skills that loaded, and the skill files that were skipped with why."""
    registry = duck.context.skills
    return {
        "skills": [skill.model_dump() for skill in registry.skills],
        "problems": [{"path": str(p.path), "message": p.message} for p in registry.problems],
    }


@router.get("/skills/{skill_id}")
async def get_skill(skill_id: str, duck: Duck) -> dict[str, Any]:
    """One skill."""
    skill = duck.context.skills.get(skill_id)
    if skill is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no skill with id {skill_id!r}")
    return skill.model_dump()


@router.get("/experience")
async def list_experience(
    duck: Duck, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> list[dict[str, Any]]:
    """What the critic concluded about past turns, newest first."""
    return [asdict(r) for r in await duck.context.experience.list(limit=limit)]
