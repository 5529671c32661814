"""What can go wrong with a checkpoint or an undo, in words for people."""

from __future__ import annotations

from typing import Any


class UndoError(RuntimeError):
    """A checkpoint or an undo could not be made; the message says why."""


class UndoRefused(UndoError):
    """An undo would lose work: its files changed since, outside DuckLM or by a later change.

    Attributes:
        paths: The files changed since, relative to the workspace.
        later: The later recorded changes in the way (`id`, `call_id`, `tool`, `paths`).
    """

    def __init__(
        self, message: str, paths: list[str], later: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.paths = paths
        self.later = later or []


class NothingToUndo(UndoError, LookupError):
    """The thread has no recorded change that fits the request."""
