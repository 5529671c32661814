"""Skill proposals: patches the critic suggests, written as files and never applied silently.

A proposal is `<data dir>/skill_proposals/<id>.yaml` (0600): which skill it patches (when
the turn used one), the suggested text, the lesson, and where it came from. Proposals are
model-written runtime output, so they live in the data dir, never in the skills folder
(which may be DuckLM's install tree). `apply_proposal` adds the text to that skill's
notes and moves the file to `applied/`; a person (through `ducklm skills apply`) is the
only one who calls it, and the only writer of the skills folder.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict

from ducklm.config.yaml_files import load_yaml_model
from ducklm.stores.private import create_private_file, make_private_dir

APPLIED = "applied"


class ProposalError(ValueError):
    """A proposal cannot be listed or applied; the message says why."""


class Proposal(BaseModel):
    """One suggested skill patch."""

    model_config = ConfigDict(extra="forbid")

    id: str
    skill_id: str | None = None
    patch: str
    lesson: str = ""
    thread_id: str = ""
    created_at: float = 0.0


@dataclass(frozen=True)
class NewProposal:
    """What the critic suggests."""

    patch: str
    skill_id: str | None
    lesson: str
    thread_id: str


def write_proposal(proposals_dir: Path, new: NewProposal) -> Proposal:
    """Write a proposal file and return it. Blocking: call through `asyncio.to_thread`."""
    proposal = Proposal(
        id=uuid.uuid4().hex[:10],
        skill_id=new.skill_id,
        patch=new.patch,
        lesson=new.lesson,
        thread_id=new.thread_id,
        created_at=time.time(),
    )
    text = yaml.safe_dump(proposal.model_dump(), sort_keys=False, allow_unicode=True)
    path = create_private_file(proposals_dir / f"{proposal.id}.yaml")
    path.write_text(text, encoding="utf-8")
    return proposal


def list_proposals(proposals_dir: Path) -> list[Proposal]:
    """Proposals not applied yet, oldest first. Blocking."""
    folder = proposals_dir
    files = sorted(folder.glob("*.yaml")) if folder.is_dir() else []
    found = [load_yaml_model(f, Proposal, ProposalError, "proposal") for f in files]
    return sorted(found, key=lambda p: p.created_at)


def apply_proposal(proposals_dir: Path, skills_dir: Path, proposal_id: str) -> Path:
    """Add proposal `proposal_id`'s text to its skill's notes; return the skill file. Blocking.

    Raises:
        ProposalError: No such proposal, it names no skill, or the skill does not exist.
    """
    source = proposals_dir / f"{proposal_id}.yaml"
    if not _is_proposal_id(proposal_id):
        raise ProposalError(f"{proposal_id!r} is not a proposal id (ducklm skills proposals)")
    if not source.is_file():
        raise ProposalError(f"no proposal {proposal_id!r} in {source.parent}")
    proposal = load_yaml_model(source, Proposal, ProposalError, "proposal")
    if not proposal.skill_id:
        raise ProposalError(f"proposal {proposal_id} names no skill; add skill_id to {source}")
    skill_file = skills_dir / proposal.skill_id / "skill.yaml"
    if not skill_file.is_file():
        raise ProposalError(
            f"proposal {proposal_id} names skill {proposal.skill_id!r}, which does not exist"
        )
    data = yaml.safe_load(skill_file.read_text(encoding="utf-8")) or {}
    notes = str(data.get("notes") or "").rstrip()
    data["notes"] = f"{notes}\n{proposal.patch}".strip() if notes else proposal.patch
    skill_file.write_text(
        yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    applied = make_private_dir(source.parent / APPLIED)
    source.rename(applied / source.name)
    return skill_file


def _is_proposal_id(text: str) -> bool:
    # An id names a file: nothing that could climb out of the proposals folder.
    return bool(text) and text.isalnum()
