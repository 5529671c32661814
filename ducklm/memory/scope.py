"""Which memories a request sees, and the seed rule that picks a new memory's scope."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ducklm.memory.records import MemoryRecord, Scope

# A preference is about the person even when it names code ("I prefer tabs in Python"), so
# it is checked before the workspace markers.
_PREFERENCE = re.compile(
    r"\b(i|i'm|i am)\s+(really\s+|usually\s+|always\s+|never\s+)?"
    r"(prefer|like|love|enjoy|hate|dislike|want|always|never|usually|can't stand)\b"
    r"|\bmy\s+favou?rite\b",
    re.IGNORECASE,
)
# Slashes alone prove nothing ("and/or", "24/7"): a path is rooted (/etc, ./run, ~/x), has
# two slashes (src/app/main), ends in a file name (docs/a.md) or in a slash (tests/).
_PATH = re.compile(
    r"(?<![\w/])(?:~|\.{1,2})?/[\w.-]+"
    r"|\b[\w.-]+/[\w.-]+/"
    r"|\b[\w-]+/[\w-]*\.[a-z]{1,4}\b"
    r"|\b[\w-]+/(?=[\s`,;:)]|$)"
)
_FILE = re.compile(r"\b[\w-]+\.(?:py|md|toml|ya?ml|json|js|ts|tsx|rs|go|sh|txt|cfg|ini|sql|lock)\b")
_CODE = re.compile(
    r"`[^`]+`|\b[a-z]+_[a-z0-9_]+\b|\b[a-z]{2,}[A-Z]\w*\b"
)  # `x`, snake_case, camelCase
_PROJECT = re.compile(
    r"\b(this|the|our)\s+(project|repo|repository|codebase|app|service|package|module)\b"
    r"|\b(repo|repository|codebase|branch|commit|pull request|ci|pipeline|makefile|"
    r"dockerfile|readme|unit tests?|test suite|migrations?|endpoint)\b",
    re.IGNORECASE,
)
_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself)\b", re.IGNORECASE)


def infer_scope(text: str, *, user_names: Iterable[str] = ()) -> Scope:
    """The scope a memory gets when the caller names none.

    A deterministic seed rule, in this order: a preference of the person is `global`;
    anything naming files, paths, code or the project is `workspace`; any other statement
    about the person ("I", "my", "me", or one of `user_names`) is `global`; the rest
    belongs to the `conversation`.

    Args:
        text: The memory.
        user_names: Names the person goes by, which count like "I".
    """
    if _PREFERENCE.search(text):
        return "global"
    if any(p.search(text) for p in (_PATH, _FILE, _CODE, _PROJECT)):
        return "workspace"
    if _PERSON.search(text) or _names_person(text, user_names):
        return "global"
    return "conversation"


def _names_person(text: str, names: Iterable[str]) -> bool:
    return any(re.search(rf"\b{re.escape(n)}\b", text, re.IGNORECASE) for n in names if n)


@dataclass(frozen=True)
class Visibility:
    """The fields of a record that decide who sees it (kept in memory for fast filtering)."""

    scope: Scope
    workspace: str | None
    conversation_id: str | None
    superseded: bool
    said_at: float = 0.0
    """When it was said (the record's `created_at`), for searches within dates."""

    @classmethod
    def of(cls, record: MemoryRecord) -> Visibility:
        """The visibility of `record`."""
        superseded = record.superseded_by is not None
        return cls(
            record.scope, record.workspace, record.conversation_id, superseded, record.created_at
        )


@dataclass(frozen=True)
class View:
    """Where a request comes from (its workspace and conversation), and what it leaves out."""

    workspace: str | None
    conversation_id: str | None
    since: float | None = None
    """Only what was said at or after this Unix time."""
    until: float | None = None
    """Only what was said before this Unix time."""
    others_only: bool = False
    """Leave out the asking conversation's own records (its history is in the prompt)."""

    def sees(self, record: Visibility) -> bool:
        """Global records, this workspace's and this conversation's; never superseded ones."""
        if record.superseded or not self._in_window(record):
            return False
        if record.scope == "global":
            return True
        if record.scope == "workspace":
            return self.workspace is not None and record.workspace == self.workspace
        return self.conversation_id is not None and record.conversation_id == self.conversation_id

    def _in_window(self, record: Visibility) -> bool:
        if self.others_only and record.conversation_id == self.conversation_id:
            return False
        if self.since is not None and record.said_at < self.since:
            return False
        return self.until is None or record.said_at < self.until
