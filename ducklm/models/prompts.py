"""System prompts: one file per role under `prompts/roles/`, formatted at call time.

Files are read once, when the runtime opens (off the event loop); rendering is a plain
`str.format` so a prompt file can name only the fields in `PROMPT_FIELDS`.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ducklm.models.roles import RoleConfig, RoleName

PROMPT_FIELDS = frozenset({"workspace", "tools", "max_steps", "directive_schema"})


class PromptError(ValueError):
    """A prompt file is missing or names a field DuckLM does not fill."""


@dataclass(frozen=True)
class Prompts:
    """The raw system prompt text of every role."""

    templates: Mapping[RoleName, str]

    def render(self, role: RoleName, **fields: object) -> str:
        """The system prompt of `role` with `fields` filled in.

        Raises:
            PromptError: The template names a field that was not given.
        """
        try:
            return self.templates[role].format(**fields).strip()
        except KeyError as exc:
            raise PromptError(f"prompt of role {role} needs field {exc.args[0]!r}") from None


def prompts_dir() -> Path:
    """The packaged `prompts/roles` folder."""
    return Path(str(resources.files("ducklm.prompts").joinpath("roles")))


def load_prompts(roles: Mapping[RoleName, RoleConfig], directory: Path | None = None) -> Prompts:
    """Read every role's prompt file. Blocking: call through `asyncio.to_thread`.

    Raises:
        PromptError: A file is missing or uses a field outside `PROMPT_FIELDS`.
    """
    directory = directory or prompts_dir()
    templates: dict[RoleName, str] = {}
    for name, cfg in roles.items():
        path = directory / cfg.prompt
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise PromptError(f"cannot read prompt of role {name}: {exc}") from None
        unknown = _fields(text) - PROMPT_FIELDS
        if unknown:
            raise PromptError(f"prompt {path} names unknown fields: {sorted(unknown)}")
        templates[name] = text
    return Prompts(templates)


def _fields(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}
