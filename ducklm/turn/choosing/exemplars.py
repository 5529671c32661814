"""The tool selector's exemplars: requests with the call that serves them, or no tool.

`prompts/tool_exemplars.yaml` is written from the train half of the paraphrase set
(`scripts/bench/small_model_set.yaml`, `small_model.py --write-exemplars`), so the held-out
half measures phrasings the selector has never seen. A test checks the file against the
set. Read at import, like the directive examples: never a file read on the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

EXEMPLARS_FILE = "tool_exemplars.yaml"
NONE = "none"
"""An exemplar's tool when the request needs none."""


@dataclass(frozen=True)
class Exemplar:
    """One request and the call that serves it."""

    request: str
    tool: str
    """A tool's name, or `NONE`."""
    args: dict[str, Any] = field(default_factory=dict)
    """The call's arguments (a few-shot example for filling them); empty for `NONE`."""


def parse_exemplars(text: str) -> tuple[Exemplar, ...]:
    """The exemplars of a YAML list of `{request, tool, args}`.

    Raises:
        ValueError: An entry lacks its request or tool, or a tool's entry its arguments.
    """
    found = []
    for index, entry in enumerate(yaml.safe_load(text) or []):
        request, tool, args = entry.get("request"), entry.get("tool"), entry.get("args") or {}
        if not isinstance(request, str) or not isinstance(tool, str) or not isinstance(args, dict):
            raise ValueError(f"exemplar {index + 1} needs a request, a tool and args")
        if tool != NONE and not args:
            raise ValueError(f"exemplar {index + 1} ({tool}) needs the call's args")
        found.append(Exemplar(request, tool, args))
    return tuple(found)


EXEMPLARS = parse_exemplars(resources.files("ducklm.prompts").joinpath(EXEMPLARS_FILE).read_text())
"""The bundled exemplars."""
