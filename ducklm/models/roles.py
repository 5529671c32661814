"""Model roles: which model, server and sampling each role of the cycle uses.

`config/models.yaml` has a `defaults:` block and a `roles:` block; a role inherits every
default it does not set. Loading is strict (unknown roles and fields are errors) because
a typo in a role name would otherwise silently fall back to the default model.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from ducklm.config.yaml_files import load_yaml_model
from ducklm.models.sampling import Sampling

RoleName = Literal[
    "thinker", "action", "critic", "coder", "summary", "recall", "memory_policy", "sys_util"
]
ROLE_NAMES: tuple[RoleName, ...] = get_args(RoleName)
StructuredOutput = Literal["json_schema", "json_object_schema", "prompt"]
ToolMode = Literal["native", "json"]


class ModelsConfigError(ValueError):
    """The models file is missing, unreadable or invalid; the message says where."""


class _RoleFields(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    max_output_tokens: int | None = Field(default=None, ge=1)
    context_tokens: int | None = Field(default=None, ge=512)
    timeout_s: float | None = Field(default=None, gt=0)
    structured_output: StructuredOutput | None = None
    prompt: str | None = None
    tool_mode: ToolMode | None = None
    sampling: Sampling | None = None


class _ModelsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    defaults: _RoleFields
    roles: dict[RoleName, _RoleFields] = Field(default_factory=dict)


class RoleConfig(BaseModel):
    """The resolved settings of one role."""

    model_config = ConfigDict(frozen=True)

    name: RoleName
    model: str
    base_url: str
    api_key: str
    temperature: float = 0.2
    max_output_tokens: int = 512
    context_tokens: int | None = None
    """The server's context window, for servers that do not say (`ducklm.models.context_size`)."""
    timeout_s: float = 120.0
    structured_output: StructuredOutput = "json_schema"
    prompt: str
    tool_mode: ToolMode = "native"
    sampling: Sampling = Sampling()
    """Repetition penalties sent with every request (`ducklm.models.sampling`)."""


def default_models_path() -> Path:
    """The models file packaged with DuckLM (`config/models.yaml`)."""
    return Path(str(resources.files("ducklm.config").joinpath("models.yaml")))


def load_roles(
    path: Path | None = None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
) -> dict[RoleName, RoleConfig]:
    """Read the models file and resolve every role against the defaults.

    This reads a file: call it off the event loop.

    Args:
        path: The models file; the packaged one when `None`.
        base_url: `DUCK_LLM_BASE_URL`; replaces `defaults.base_url`.
        api_key: `DUCK_LLM_API_KEY`; replaces `defaults.api_key`.

    Raises:
        ModelsConfigError: The file cannot be read or does not validate.
    """
    path = path or default_models_path()
    parsed = load_yaml_model(path, _ModelsFile, ModelsConfigError, "models file")
    defaults = parsed.defaults.model_dump(exclude_none=True)
    if base_url:
        defaults["base_url"] = base_url
    if api_key:
        defaults["api_key"] = api_key
    return {name: _resolve(name, defaults, parsed.roles.get(name), path) for name in ROLE_NAMES}


def _resolve(
    name: RoleName, defaults: dict[str, Any], role: _RoleFields | None, path: Path
) -> RoleConfig:
    fields = {**defaults, "prompt": f"{name}.md"}
    if role is not None:
        fields.update(role.model_dump(exclude_none=True))
        # Field by field: a role that sets one penalty keeps the defaults' others.
        fields["sampling"] = {**defaults.get("sampling", {}), **fields.get("sampling", {})}
    missing = [key for key in ("model", "base_url") if key not in fields]
    if missing:
        raise ModelsConfigError(f"models file {path}: role {name} has no {', '.join(missing)}")
    fields.setdefault("api_key", "not-needed")
    return RoleConfig(name=name, **fields)
