"""File names as the person says them, resolved against the workspace's own names.

"What does my notes file say?" names notes.md without its extension; a tiny model asked
for the path writes "notes", "my notes file" or a name from an example. A path argument
is resolved in this order: an entry of the workspace that the request names (its path,
its file name, or its stem as a word: "notes", "the guide"); the model's path when it
exists; an entry whose name or stem is the model's path. A folder to list is the one the
request names, or the workspace itself (models copy "docs" from the examples). A file
to be written is never resolved: its name is new. In a shell command, a word that is no
file but the stem of exactly one is that file, and a file other than the one the
request names is that one.

`workspace_names` blocks (it walks the folder); the rest is pure.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_NAMES = 2000
MAX_DEPTH = 4
SKIPPED = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv"})


@dataclass(frozen=True)
class Names:
    """The workspace's files and folders, as paths relative to it."""

    files: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()


def workspace_names(root: Path) -> Names:
    """The files and folders under `root` (not hidden ones), at most `MAX_NAMES`. Blocking."""
    files: list[str] = []
    folders: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        depth = len(rel.parts)
        dirnames[:] = sorted(
            d for d in dirnames if d not in SKIPPED and not d.startswith(".") and depth < MAX_DEPTH
        )
        folders += [(rel / d).as_posix() for d in dirnames]
        files += [(rel / f).as_posix() for f in sorted(filenames) if not f.startswith(".")]
        if len(files) + len(folders) >= MAX_NAMES:
            break
    return Names(tuple(files), tuple(folders))


def resolve_args(tool: str, args: dict[str, Any], request: str, names: Names) -> dict[str, Any]:
    """`args` of a call to `tool` with its paths resolved against `names`."""
    if tool == "file_read" and isinstance(args.get("path"), str):
        return {**args, "path": resolve_path(args["path"], request, names.files) or args["path"]}
    if tool == "list_dir":  # a folder the request does not name is the workspace
        return {**args, "path": named_in(request, names.folders) or "."}
    if tool == "shell_exec" and isinstance(args.get("command"), str):
        named = named_in(request, names.files)
        return {**args, "command": resolve_command(args["command"], names.files, named)}
    return args


def resolve_path(path: str, request: str, entries: Iterable[str]) -> str | None:
    """The entry `request` names, else `path` if it is one, else the entry `path` names."""
    entries = tuple(entries)
    named = named_in(request, entries)
    if named is not None:
        return named
    clean = path.strip().removeprefix("./").strip("/")
    if clean in entries:
        return clean
    return named_in(clean, entries, whole=True)


def named_in(text: str, entries: Iterable[str], *, whole: bool = False) -> str | None:
    """The one entry `text` names by path, file name or stem (the longest such name wins).

    `whole`: `text` must be the name itself, not contain it.
    """
    lowered = text.lower()
    found: dict[str, int] = {}
    for entry in entries:
        for name in _spellings(entry):
            if _names(lowered, name, whole):
                found[entry] = max(found.get(entry, 0), len(name))
    if not found:
        return None
    best = max(found.values())
    winners = [entry for entry, length in found.items() if length == best]
    return winners[0] if len(winners) == 1 else None


def resolve_command(command: str, files: Iterable[str], named: str | None = None) -> str:
    """`command` with its file words resolved.

    A word that is no file but one file's stem becomes that file; when the request names
    one file (`named`), a word naming another file becomes that one: the model copied it
    from an example.
    """
    files = tuple(files)
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    changed = False
    for i, word in enumerate(words):
        if i == 0 or word.startswith("-") or not re.fullmatch(r"[\w./-]+", word):
            continue
        if word in files:
            found: str | None = word
        else:
            stems = [f for f in files if Path(f).stem.lower() == word.lower().strip("/")]
            found = stems[0] if len(stems) == 1 else None
        if found is not None and named is not None:
            found = named
        if found is not None and found != word:
            words[i], changed = found, True
    return shlex.join(words) if changed else command


def _spellings(entry: str) -> set[str]:
    path = Path(entry)
    names = {entry.lower(), path.name.lower()}
    if len(path.stem) >= 3:  # "a" or "db" would match too much
        names.add(path.stem.lower())
        names.add(path.stem.lower().replace("_", " ").replace("-", " "))
    return names


def _names(text: str, name: str, whole: bool) -> bool:
    if whole:
        return text == name
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.\w)", text) is not None
