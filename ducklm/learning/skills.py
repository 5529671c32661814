"""Skills: short procedures for recurring tasks, in `skills/<id>/skill.yaml`.

The registry reads every skill folder once (folders whose name starts with `_` or `.`
are not skills; an older DuckLM kept proposed patches in `skills/_proposals/`). A broken
skill file is reported and skipped, never fatal: one bad file must not stop the agent. A task gets
the skills whose triggers it names, and, when an embedding function is given, the ones
whose meaning is close enough; they are rendered into a token budget for the prompt.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from ducklm.config.yaml_files import load_yaml_model
from ducklm.models.tokens import TokenCounter, fit_head

if TYPE_CHECKING:
    from ducklm.config.settings import Settings

log = logging.getLogger(__name__)

SKILL_FILE = "skill.yaml"
SKILL_CUT = "\n[... the rest of this skill was cut to fit ...]"

Vectors = Sequence[Sequence[float]] | npt.NDArray[np.floating[Any]]
"""One vector per text: a list of lists, or a 2-D array (the memory store's embedder)."""
Embed = Callable[[list[str]], Awaitable[Vectors]]
"""Texts to vectors (injected: the memory store's embedding model)."""
_Matrix = npt.NDArray[np.float64]

Line = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class SkillFileError(ValueError):
    """A skill file cannot be read or does not fit the skill schema."""


class Skill(BaseModel):
    """One skill, as written in its `skill.yaml`."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]
    """Same as the folder name: lowercase letters, digits and `_`."""
    name: Line
    description: Line
    """What the skill is for, in one sentence; with the examples, what embedding
    similarity compares with the task."""
    triggers: list[Line]
    """Words or phrases that select the skill when a task names them (any case)."""
    procedure: list[Line] = Field(min_length=1)
    """Ordered, imperative steps that name DuckLM's tools."""
    examples: list[Line] = []
    """Short requests the skill is for."""
    notes: str = ""

    def embedding_texts(self) -> list[str]:
        """What stands for the skill when it is compared with a task by meaning.

        Each example is a text of its own: a request is closer to one example phrased
        like it than to all of them averaged into one vector.
        """
        return [f"{self.name}: {self.description}", *self.examples]

    def render(self) -> str:
        """The skill as a small model reads it in its prompt.

        Examples are left out: they serve selection (`embedding_texts`), and the prompt's
        budget is better spent on the steps.
        """
        lines = [f"### {self.id}: {self.name}", self.description, "Steps:"]
        lines += [f"{number}. {step}" for number, step in enumerate(self.procedure, 1)]
        if self.notes.strip():
            lines.append(f"Note: {self.notes.strip()}")
        return "\n".join(lines)


@dataclass(frozen=True)
class SkillProblem:
    """A skill file that was skipped, and why."""

    path: Path
    message: str


@dataclass
class SkillRegistry:
    """The skills that loaded, and the problems of those that did not."""

    skills: list[Skill] = field(default_factory=list)
    problems: list[SkillProblem] = field(default_factory=list)
    _vectors: tuple[Embed, _Matrix, list[int]] | None = field(default=None, init=False, repr=False)
    """Cache: the embedder, the skills' vectors, and which skill each row belongs to."""

    @classmethod
    def load(cls, folder: Path) -> SkillRegistry:
        """Read every `<folder>/<id>/skill.yaml`. Blocking: call via `asyncio.to_thread`.

        Problems (a missing folder or file, bad YAML, unknown or invalid fields, an id
        that is not the folder's name) are logged and kept in `problems`.
        """
        registry = cls()
        if not folder.is_dir():
            registry._report(folder, "the skills folder does not exist")
            return registry
        for entry in sorted(folder.iterdir()):
            if entry.is_dir() and not entry.name.startswith(("_", ".")):
                registry._load_one(entry)
        return registry

    def get(self, skill_id: str) -> Skill | None:
        """The skill with this id, if it loaded."""
        return next((s for s in self.skills if s.id == skill_id), None)

    async def select(
        self, task: str, *, embed: Embed | None = None, limit: int = 2, threshold: float = 0.4
    ) -> list[Skill]:
        """The skills for `task`, best first, at most `limit`.

        A skill is chosen when the task names one of its triggers (whole words, any case)
        or, with `embed`, when its cosine similarity to the task is at least `threshold`.
        Triggered skills rank first, then by similarity. If `embed` fails, selection
        falls back to triggers: a broken embedding model must not stop a turn.

        The default threshold is set for all-MiniLM-L6-v2, the bundled embedder: over
        sample requests, related skills scored 0.41-0.62 against their nearest example
        and unrelated ones up to 0.37.
        """
        similarity = await self._similarity(task, embed)
        scored = []
        for index, skill in enumerate(self.skills):
            hits = trigger_hits(skill, task)
            if hits or similarity[index] >= threshold:
                scored.append(((hits > 0, similarity[index], hits), index))
        scored.sort(key=lambda item: item[0], reverse=True)
        return [self.skills[index] for _, index in scored[:limit]]

    async def _similarity(self, task: str, embed: Embed | None) -> list[float]:
        if embed is None or not self.skills or not task.strip():
            return [0.0] * len(self.skills)
        try:
            rows, owners = await self._skill_vectors(embed)
            row_similarity = cosines(_matrix(await embed([task]), rows=1)[0], rows)
        except Exception:
            # The embedder is another component's model; whatever it raises, selection
            # degrades to triggers instead of failing the turn.
            log.warning("skill selection by meaning failed; using triggers only", exc_info=True)
            return [0.0] * len(self.skills)
        best = [-1.0] * len(self.skills)
        for owner, value in zip(owners, row_similarity, strict=True):
            best[owner] = max(best[owner], value)
        return best

    async def _skill_vectors(self, embed: Embed) -> tuple[_Matrix, list[int]]:
        # The skills do not change after loading: embed them once per embedding function.
        if self._vectors is None or self._vectors[0] != embed:
            texts = [(i, t) for i, s in enumerate(self.skills) for t in s.embedding_texts()]
            vectors = await embed([text for _, text in texts])
            owners = [owner for owner, _ in texts]
            self._vectors = (embed, _matrix(vectors, rows=len(texts)), owners)
        return self._vectors[1], self._vectors[2]

    def _load_one(self, folder: Path) -> None:
        path = folder / SKILL_FILE
        if not path.is_file():
            self._report(path, f"no {SKILL_FILE} in the skill folder")
            return
        try:
            skill = load_yaml_model(path, Skill, SkillFileError, "skill")
        except SkillFileError as exc:
            self._report(path, str(exc))
            return
        # Folder names are unique, so ids that match them are too.
        if skill.id != folder.name:
            self._report(path, f"id {skill.id!r} differs from the folder name {folder.name!r}")
        else:
            self.skills.append(skill)

    def _report(self, path: Path, message: str) -> None:
        log.warning("skipped skill %s: %s", path, message)
        self.problems.append(SkillProblem(path, message))


def default_skills_dir() -> Path:
    """The `skills/` folder beside the `ducklm` package (a source or editable install)."""
    return Path(__file__).parents[2] / "skills"  # ducklm/learning/skills.py -> the root


def skills_dir_of(settings: Settings) -> Path:
    """The folder DuckLM loads skills from: `DUCK_SKILLS_DIR`, else the bundled one."""
    return settings.skills_dir or default_skills_dir()


def trigger_hits(skill: Skill, task: str) -> int:
    """How many of the skill's triggers `task` names as whole words, in any case."""
    return sum(1 for trigger in skill.triggers if _trigger_pattern(trigger).search(task))


@functools.cache
def _trigger_pattern(trigger: str) -> re.Pattern[str]:
    # Whole words only ("test" does not fire on "latest"); any whitespace between the
    # words of a phrase. Cached here: building the pattern text for every trigger of
    # every skill cost about 1 ms a turn, even with `re`'s own cache.
    words = (re.escape(word) for word in trigger.split())
    return re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.IGNORECASE)


def cosines(query: _Matrix, rows: _Matrix) -> list[float]:
    """Cosine similarity of `query` to each row; 0 where either vector is zero.

    Raises:
        ValueError: The dimensions differ.
    """
    if rows.shape[1] != query.shape[0]:
        raise ValueError(f"vectors of {rows.shape[1]} and {query.shape[0]} dimensions")
    norms = np.linalg.norm(rows, axis=1) * np.linalg.norm(query)
    dots = rows @ query
    similarity = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return [float(x) for x in similarity]


def _matrix(vectors: Vectors, *, rows: int) -> _Matrix:
    """The embedder's answer as a float matrix of `rows` rows; ValueError if it is not."""
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != rows:
        raise ValueError(f"expected {rows} vectors, got an array of shape {matrix.shape}")
    return matrix


def render_skills(skills: Sequence[Skill], budget_tokens: int, count: TokenCounter) -> str:
    """The skills as prompt text within `budget_tokens`.

    Whole skills are dropped from the end (the least relevant) until the rest fits. If
    even the first does not fit alone, it is cut at a line end with a visible marker: a
    lower-ranked skill cut short would be noise, the best one cut short still guides.
    """
    rendered = [skill.render() for skill in skills]
    for keep in range(len(rendered), 0, -1):
        text = "\n\n".join(rendered[:keep])
        if count(text) <= budget_tokens:
            return text
    return fit_head(rendered[0], budget_tokens, count, SKILL_CUT) if rendered else ""
