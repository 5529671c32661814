"""Files in a workspace that a common tool runs by itself when the person next works there.

A command in the sandbox runs with no rights worth having; the same code planted in one
of these files runs later with the person's: `git status` in a repository starts its
`core.fsmonitor`, `git commit` its hooks, direnv an `.envrc` on `cd`, VS Code a task
with `runOn: folderOpen`. So these are kept out of a tool call's reach by construction:

- in the sandbox's view they are read-only (`tools/sandbox/view.py`, found by the one scan
  that also finds secret files), at every depth and in any letter case;
- a file tool that writes one asks first, and the card names the tool that runs it
  (`tools/policy.py`);
- a shell command that names one as a write target asks (`tools/commands/paths.py`), and
  a git command that writes a repository asks; approved, its repositories' control
  folders are writable for that one command.

docs/architecture.md ("What a command can see") lists what else runs by itself and why it
is not here.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

CONTROL_FOLDERS: dict[str, str] = {
    ".git": "git runs its config (core.fsmonitor, aliases, pager) and its hooks",
    ".hg": "Mercurial runs the hooks of its hgrc",
}
"""Version control's own folders (a git worktree's `.git` may be a file naming one)."""
RUNS_ITSELF: dict[str, str] = {
    ".envrc": "direnv runs it when a shell enters the folder",
    ".husky": "git runs these hooks (husky) at commit and checkout",
    ".pre-commit-config.yaml": "pre-commit runs the hooks it names at each git commit",
    ".vscode": "VS Code runs its tasks marked runOn: folderOpen when the folder opens",
    ".mise.toml": "mise runs its hooks and env scripts when a shell enters the folder",
    "mise.toml": "mise runs its hooks and env scripts when a shell enters the folder",
}
"""Other files and folders a tool runs without being asked to, by name (any depth)."""
NAMES = frozenset({*CONTROL_FOLDERS, *RUNS_ITSELF})
LINKED = "git runs it: a repository's gitfile or core.hooksPath names this folder"
MAX_POINTER_BYTES = 64 << 10
"""A gitfile or a config read for the path it names; larger ones name nothing."""

_GITDIR = re.compile(r"gitdir:\s*(.+?)\s*$", re.MULTILINE)
_SECTION = re.compile(r"\s*\[\s*([A-Za-z0-9.-]+)[^\]]*\](.*)")
_HOOKS_PATH = re.compile(r"\s*hookspath\s*=\s*(.*?)\s*$", re.IGNORECASE)


def runner_of(parts: Sequence[str]) -> str | None:
    """What runs a path by itself, given its parts below the workspace; `None` if nothing.

    Compared case-blind: on a case-insensitive file system `.GIT` is `.git`, and on a
    case-sensitive one nothing is lost by asking.
    """
    for part in parts:
        key = part.casefold()
        if key in CONTROL_FOLDERS:
            return CONTROL_FOLDERS[key]
        if key in RUNS_ITSELF:
            return RUNS_ITSELF[key]
    return None


def is_control(name: str) -> bool:
    """Whether a folder or file name is version control's own (`.git`, `.GIT`, `.hg`)."""
    return name.casefold() in CONTROL_FOLDERS


def git_folder(control: Path) -> Path | None:
    """The git folder a `.git` entry stands for: itself, or the one its gitfile names.

    A worktree's or a submodule's `.git` is a file, `gitdir: ../x`, relative to its own
    folder. Blocking; a file that names nothing gives `None`.
    """
    text = _head(control)  # a folder reads as None: only a regular file is a gitfile
    if text is None:
        return control
    match = _GITDIR.search(text)
    return control.parent / match.group(1) if match is not None else None


def hooks_folder(git_dir: Path, worktree: Path) -> Path | None:
    """The folder a repository's `core.hooksPath` names (`.husky/_`, `.githooks`), if any.

    Relative to the worktree, as git reads it. Blocking.
    """
    config = _head(git_dir / "config")
    hooks = _hooks_path(config) if config is not None else None
    return worktree / Path(hooks).expanduser() if hooks else None


def inside_git_folder(target: Path, root: Path) -> bool:
    """Whether a folder above `target`, up to `root`, is a git folder by its content.

    git takes a folder with `HEAD`, `objects/` and `refs/` for a repository's own, whatever
    its name: a bare repository, or what a gitfile names. Blocking (two `lstat`s a level).
    """
    folder = target.parent
    while folder != root and root in folder.parents:
        if all(_exists(folder / name) for name in ("HEAD", "objects", "refs")):
            return True
        folder = folder.parent
    return False


def _exists(path: Path) -> bool:
    try:
        path.lstat()
    except OSError:
        return False
    return True


def _hooks_path(text: str) -> str | None:
    section, value = "", None
    for line in text.splitlines():
        rest, header = line, _SECTION.match(line)
        if header is not None:  # `[core] hooksPath = x`: a key may follow on the line
            section, rest = header.group(1).lower(), header.group(2)
        match = _HOOKS_PATH.match(rest)
        if section == "core" and match is not None:
            value = match.group(1).strip('"')
    return value


def _head(path: Path) -> str | None:
    # O_NONBLOCK and a regular-file check: a FIFO planted as `config` must not hang the scan
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, MAX_POINTER_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)
