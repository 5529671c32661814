"""`${VAR}` and `${VAR:-default}` in a server's `env`, `headers`, `args` and `url`.

As Claude Code does: a person keeps a server's key in the environment and names it in
`mcp.json`. The file is checked when it is read (DuckLM's own `DUCK_*` variables, its API
token among them, are never handed to a server that way); the values are filled when
the server starts, so one server whose variable is unset fails alone, and says which.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
DUCK_REFERENCE = re.compile(r"\$\{DUCK_[^}]*\}")
DUCK_REFUSED = "DuckLM's own DUCK_* variables are not passed to servers"
UNSET = "the variable {name} is not set (named in {field})"


class UnsetVariable(ValueError):
    """A `${VAR}` without a default names a variable the environment lacks."""


def refuse_duck(value: str) -> str:
    """`value` unchanged.

    Raises:
        ValueError: It names a `DUCK_*` variable.
    """
    if DUCK_REFERENCE.search(value):
        raise ValueError(DUCK_REFUSED)
    return value


def expand(value: str, environ: Mapping[str, str], field: str) -> str:
    """`value` with each `${VAR}` / `${VAR:-default}` filled from `environ`.

    Raises:
        UnsetVariable: A variable without a default is unset (`field` names where).
    """

    def fill(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = environ.get(name)
        if found is not None and (found or default is None):
            return found
        if default is not None:  # `:-` as in the shell: unset or empty takes the default
            return default
        raise UnsetVariable(UNSET.format(name=name, field=field))

    return REFERENCE.sub(fill, value)
