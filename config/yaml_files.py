"""Reading YAML config files strictly, with errors that say where the problem is."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


def validation_details(exc: ValidationError) -> str:
    """`field.path: message` for each problem, joined: short enough for a person or a model."""
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())


def load_yaml_model(path: Path, model: type[M], error: type[Exception], what: str) -> M:
    """Parse the YAML file at `path` into `model`. Blocking: call it off the event loop.

    Raises:
        error: The file cannot be read or parsed (`cannot read {what} {path}: ...`), or
            does not fit `model` (`invalid {what} {path}: field.path: message; ...`).
    """
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise error(f"cannot read {what} {path}: {exc}") from None
    try:
        return model.model_validate(raw or {})
    except ValidationError as exc:
        raise error(f"invalid {what} {path}: {validation_details(exc)}") from None
