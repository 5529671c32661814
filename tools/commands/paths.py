"""Where the paths a command names land, worked out lexically.

Paths are resolved without I/O and symlinks are not followed: the sandbox confines
what a link could reach. `~`, `$HOME` and `$PWD` expand to what the policy was told.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import PurePosixPath
from typing import Literal

from ducklm.tools import autorun
from ducklm.tools.commands.rules import PermissionRules
from ducklm.tools.commands.words import GLOB_CHARS, Word

Place = Literal[
    "harmless", "protected", "critical", "workspace", "git", "scratch", "outside", "unknown"
]

_ROOT = PurePosixPath("/")
_NO_HOME = PurePosixPath("/nonexistent-home")
_HOME_OR_PWD = re.compile(r"\$(?:\{(?:HOME|PWD)\}|(?:HOME|PWD)(?!\w))")
_BRACE_LIST = re.compile(r"\{([^{}]*,[^{}]*)\}")
_BRACE_SEQUENCE = re.compile(r"\{(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?\}")
_BRACES = re.compile(r"\{[^{}]*\}")
_MAX_BRACE_WORDS = 64


def expand_path(
    word: Word, cwd: PurePosixPath | None, home: PurePosixPath | None
) -> PurePosixPath | None:
    """Where a word points as a path, expanding `~`, `$HOME` and `$PWD`; None if unknown."""
    text = word.text
    if word.substituted:
        return None
    if word.params:
        if not set(word.params) <= {"HOME", "PWD"} or home is None or cwd is None:
            return None
        text = _HOME_OR_PWD.sub(lambda m: str(home if "HOME" in m.group() else cwd), text)
    if word.tilde:
        head, sep, tail = text.partition("/")
        user = head[1:]
        base = home if not user else PurePosixPath("/root" if user == "root" else f"/home/{user}")
        if base is None or user in ("+", "-"):
            return None
        text = f"{base}{sep}{tail}"
    if not text.startswith("/"):
        if cwd is None:
            return None
        text = f"{cwd}/{text}"
    normal = posixpath.normpath(text)
    return PurePosixPath("/" + normal.lstrip("/"))


def fixed_prefix(path: PurePosixPath) -> PurePosixPath:
    """The part of a path before its first glob or brace (`/etc/*.conf` -> `/etc`)."""
    parts: list[str] = []
    for part in path.parts:
        if any(c in part for c in GLOB_CHARS):
            break
        parts.append(part)
    return PurePosixPath(*parts) if parts else PurePosixPath("/")


def _runner_of_glob(part: str) -> str | None:
    """What runs a name that a path part, as a glob, can match (`.gi?`, `.g[^x]t`).

    As in bash, a name that starts with a dot matches only a part that starts with one.
    """
    if (found := autorun.runner_of([part])) is not None or not any(c in part for c in "*?["):
        return found
    pattern = part.casefold().replace("[^", "[!")  # fnmatch negates only with `!`
    for name in sorted(autorun.NAMES):
        if fnmatchcase(name, pattern) and (pattern[:1] == "." or name[:1] != "."):
            return autorun.runner_of([name])
    return None


def _brace_expansion(part: str) -> list[str]:
    """The words bash's brace expansion makes of a path part (`.{g,x}it`, `.{f..h}it`).

    Past `_MAX_BRACE_WORDS`, each brace stands for anything (`*`), which can only ask more.
    """
    done: list[str] = []
    todo = [part]
    while todo:
        item = todo.pop()
        match = _BRACE_LIST.search(item) or _BRACE_SEQUENCE.search(item)
        if match is None:
            done.append(item)
            continue
        words = _brace_words(match)
        if words is None or len(done) + len(todo) + len(words) > _MAX_BRACE_WORDS:
            return [_BRACES.sub("*", part)]
        todo.extend(item[: match.start()] + word + item[match.end() :] for word in words)
    return done


def _brace_words(match: re.Match[str]) -> list[str] | None:
    """The words of one `{a,b}` or `{x..y[..step]}`; None for a sequence too long."""
    if match.re is _BRACE_LIST:
        return match.group(1).split(",")
    first, last, step = match.group(1), match.group(2), abs(int(match.group(3) or 1)) or 1
    letters = not first.lstrip("-").isdigit()
    low, high = (ord(first), ord(last)) if letters else (int(first), int(last))
    if abs(high - low) // step >= _MAX_BRACE_WORDS:
        return None
    numbers = range(low, high + 1, step) if low <= high else range(low, high - 1, -step)
    return [chr(n) if letters else str(n) for n in numbers]


def is_within(path: PurePosixPath, root: PurePosixPath) -> bool:
    """Whether `path` is `root` or below it (lexically)."""
    return path == root or root in path.parents


@dataclass
class Places:
    """The folders paths are resolved against, as the command line moves them."""

    rules: PermissionRules
    workspace: PurePosixPath
    home: PurePosixPath | None
    """What `~` expands to; None once the command sets HOME itself."""
    cwd: PurePosixPath | None
    """The working folder; None once `cd` goes somewhere unknown."""

    def expand(self, word: Word) -> PurePosixPath | None:
        """Where a word points from the working folder; None if unknown."""
        return expand_path(word, self.cwd, self.home)

    def place(self, word: Word) -> Place:
        """Where a path lands: harmless, protected, critical, workspace, git, scratch ..."""
        path = self.expand(word)
        if path is None:
            return "unknown"
        fixed = fixed_prefix(path)
        home = self.home or _NO_HOME
        rules = self.rules
        checks: tuple[tuple[Place, Callable[[], bool]], ...] = (
            ("harmless", lambda: self._matches(path, rules.harmless_paths)),
            ("protected", lambda: self._matches(path, rules.protected_paths)),
            ("protected", lambda: self._matches(fixed, rules.protected_paths)),
            # /, top-level folders, home and its parents: even when the workspace is one
            ("critical", lambda: fixed.parent in (fixed, _ROOT) or is_within(home, fixed)),
            ("workspace", lambda: is_within(fixed, self.workspace)),
            (
                "scratch",
                lambda: any(is_within(fixed, PurePosixPath(p)) for p in rules.scratch_paths),
            ),
            ("critical", lambda: is_within(self.workspace, fixed)),
        )
        place: Place = next((name for name, check in checks if check()), "outside")
        if place == "workspace" and self.runner(word) is not None:
            return "git"
        return place

    def runner(self, word: Word) -> str | None:
        """What runs a workspace path by itself (a `.git`, `.envrc`: `tools/autorun.py`).

        A glob part counts when it can match such a name (`.gi?`, `.g[i]t`, `mi?e.toml`),
        after bash's brace expansion (`.{g,x}it`).
        """
        path = self.expand(word)
        if path is None or not is_within(path, self.workspace):
            return None
        for part in path.relative_to(self.workspace).parts:
            for alternative in _brace_expansion(part):
                if (found := _runner_of_glob(alternative)) is not None:
                    return found
        return None

    def is_socket(self, word: Word) -> bool:
        """Whether a path is bash's /dev/tcp or /dev/udp network pseudo-file."""
        path = self.expand(word)
        return path is not None and path.parts[1:3] in (("dev", "tcp"), ("dev", "udp"))

    def is_secret(self, word: Word) -> bool:
        """Whether a path (also as `file://...` or curl's `@file`) may hold secrets."""
        text = word.text.removeprefix("file://").removeprefix("@")
        path = self.expand(replace(word, text=text))
        if path is None:
            return False
        fixed = fixed_prefix(path)
        home = self.home or _NO_HOME
        for pattern in map(self._expand, self.rules.secret_paths):
            # a glob matches a secret when the secret's name fits the glob
            target = path.name if "/" not in pattern else str(path)
            hit = fnmatchcase(target, pattern) or (fixed != path and fnmatchcase(pattern, target))
            if "/" in pattern and not hit:
                # reading a folder that holds secrets under home (`grep -r x ~`)
                anchor = fixed_prefix(PurePosixPath(pattern))
                hit = is_within(anchor, home) and fixed != anchor and is_within(anchor, fixed)
            if hit:
                return True
        return False

    def change_folder(self, name: str, args: list[Word]) -> None:
        """Follow `cd`, `pushd` or `popd`; the folder is unknown when it cannot be told."""
        targets = [w for w in args if not w.text.startswith("-") or w.text == "-"]
        if name == "popd" or (targets and targets[0].text == "-"):
            self.cwd = None
        elif not targets:
            self.cwd = self.home
        else:
            self.cwd = self.expand(targets[0])

    def _matches(self, path: PurePosixPath, patterns: tuple[str, ...]) -> bool:
        return any(fnmatchcase(str(path), self._expand(p)) for p in patterns)

    def _expand(self, pattern: str) -> str:
        if pattern.startswith("~"):
            return str(self.home or _NO_HOME) + pattern[1:]
        return pattern
