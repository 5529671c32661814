"""Secret files by name: the bare globs of `secret_paths` (`.env`, `.env.*`, `*.pem`, ...).

The sandbox shows such files empty to a command (`tools/sandbox/view.py`); the file
tools ask before reading one, by its resolved path, so a link to `.env` or the
workspace's `.env.local` by its absolute path asks too (`tools/policy.py`), and
`search_files` leaves them out. The content scan (`hide.py`) is the first line; names
catch what has no known shape (`.env`'s `DEBUG_PIN=4711`).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path


@cache
def _pattern(names: tuple[str, ...]) -> re.Pattern[str] | None:
    if not names:
        return None
    return re.compile("|".join(fnmatch.translate(name) for name in names))


def is_secret_name(path: Path, names: Sequence[str]) -> bool:
    """Whether the file `path` (already resolved) has a secret's name among `names`."""
    pattern = _pattern(tuple(names))
    return pattern is not None and pattern.match(path.name) is not None


def secret_name_args(tool: str, names: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """What the tool step injects into a call of `tool` for the name rule (maybe nothing)."""
    return {"secret_names": tuple(names)} if tool == "search_files" else {}
