"""Skills and the critic's experience records."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, status

from ducklm.learning.skills import Skill
from ducklm.server.deps import Duck
from ducklm.server.responses import SkillProblemView, SkillsView, errors
from ducklm.server.schemas import Id
from ducklm.stores.experience import ExperienceRecord

router = APIRouter(tags=["learning"])


@router.get("/skills")
async def list_skills(duck: Duck) -> SkillsView:
    """The skills that loaded, and the skill files that were skipped with why."""
    registry = duck.context.skills
    return SkillsView(
        skills=list(registry.skills),
        problems=[SkillProblemView(path=str(p.path), message=p.message) for p in registry.problems],
    )


@router.get("/skills/{skill_id}", responses=errors(404))
async def get_skill(skill_id: Id, duck: Duck) -> Skill:
    """One skill."""
    skill = duck.context.skills.get(skill_id)
    if skill is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no skill with id {skill_id!r}")
    return skill


@router.get("/experience")
async def list_experience(
    duck: Duck, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> list[ExperienceRecord]:
    """What the critic concluded about past turns, newest first."""
    return await duck.context.experience.list(limit=limit)
