"""Settings of the workspace's own git repository that make git start programs.

The sandbox overrides the settings with fixed names (`tools/sandbox/git_config.py`:
core.fsmonitor, core.pager, core.hooksPath ...). Settings whose names the repository
chooses cannot be overridden: a filter (`filter.x.clean`), a diff driver
(`diff.x.textconv`, `diff.x.command`), a merge driver, a `!` alias, an include; nor
can `diff.external`, whose empty value breaks `git diff`. For those the policy reads
the repository's config and asks, naming the key.

The scan is deliberately loose: it reads every line that could be a section header
or a key, so a line git reads as a key is never missed; a continuation line it reads
as a key can only make it ask more.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

RUNS_KEY = "the repository's config sets {key}, which git runs"
INCLUDES = "the repository's config sets {key}: git reads settings the policy cannot see"
UNREADABLE = "git: the repository's config {path} cannot be read"
MAX_CONFIG_BYTES = 1 << 20

_HEADER = re.compile(r'\s*\[\s*([A-Za-z0-9.-]*)\s*(?:"((?:[^"\\]|\\.)*)")?\s*\](.*)')
_KEY = re.compile(r"\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?")
# (section, key) with a subsection the repository names; "*" is any key
_NAMED: dict[str, tuple[str, ...]] = {
    "filter": ("clean", "smudge", "process"),
    "diff": ("textconv", "command"),
    "merge": ("driver",),
    "man": ("cmd", "path"),
    "browser": ("cmd", "path"),
    "includeif": ("path",),
}
_PLAIN: dict[str, tuple[str, ...]] = {
    "diff": ("external",),
    "include": ("path",),
    "man": ("viewer",),
    "web": ("browser",),
    "help": ("browser",),
}
_BANG = frozenset({"alias", "submodule"})  # `!cmd` values run a shell


def risky_keys(text: str) -> list[str]:
    """The keys of a git config text that start programs, as `section.sub.key`."""
    found: list[str] = []
    section, sub = "", None
    for line in text.lstrip("\ufeff").split("\n"):
        rest, header = line, _HEADER.match(line)
        if header is not None:  # `[filter "x"] clean = ...`: a key may follow on the line
            name, quoted, rest = header.groups()
            section, _, dotted = name.lower().partition(".")
            sub = quoted if quoted is not None else (dotted or None)
        key = _KEY.match(rest)
        if key is None or not section:
            continue
        name, value = key.group(1).lower(), key.group(2) or ""
        if _risky(section, sub, name, value):
            found.append(".".join(p for p in (section, sub, name) if p is not None))
    return found


def _risky(section: str, sub: str | None, key: str, value: str) -> bool:
    if section == "gpg" and sub is not None and sub.lower() == "ssh":
        return key == "defaultkeycommand"
    if section in _BANG:
        return "!" in value
    listed = _NAMED if sub is not None else _PLAIN
    return key in listed.get(section, ())


def config_files(start: PurePosixPath, workspace: PurePosixPath) -> list[Path]:
    """The config files git reads for a repository found from `start` up to `workspace`.

    Only the workspace is in the sandbox's view, so a repository above it is not.
    """
    folder = start
    while folder == workspace or workspace in folder.parents:
        dot_git = Path(str(folder)) / ".git"
        if dot_git.is_dir():
            return git_dir_files(dot_git)
        if dot_git.is_file():
            return git_dir_files(_pointed(dot_git))
        folder = folder.parent
    return []


def git_dir_files(git_dir: Path) -> list[Path]:
    """The config files of a git dir: its own, a worktree's, and the common dir's."""
    files = [git_dir / "config", git_dir / "config.worktree"]
    common = git_dir / "commondir"
    if common.is_file():
        files.append(git_dir / read_config(common).strip() / "config")
    return files


def _pointed(dot_git: Path) -> Path:
    """The git dir a `.git` file points at (`gitdir: ../x/.git`)."""
    target = read_config(dot_git).removeprefix("gitdir:").strip()
    return dot_git.parent / target


def reasons(files: list[Path]) -> list[str]:
    """Why git would start a program with these config files; empty when it would not."""
    found = []
    for path in files:
        try:
            if not path.is_file():
                continue
            text = read_config(path)
        except (OSError, ValueError):
            found.append(UNREADABLE.format(path=path.name))
            continue
        for key in risky_keys(text):
            plain = key.split(".")[0] in ("include", "includeif")
            found.append((INCLUDES if plain else RUNS_KEY).format(key=key))
    return found


def read_config(path: Path) -> str:
    """A git config file's text, at most `MAX_CONFIG_BYTES` (ValueError past it). Blocking."""
    with path.open("rb") as f:
        data = f.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise ValueError("too large")
    return data.decode("utf-8", "replace")
