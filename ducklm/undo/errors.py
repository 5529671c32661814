"""What can go wrong with a checkpoint or an undo, in words for people."""

from __future__ import annotations


class UndoError(RuntimeError):
    """A checkpoint or an undo could not be made; the message says why."""


class UndoRefused(UndoError):
    """An undo would lose work: files changed outside DuckLM since its change.

    Attributes:
        paths: The files changed since, relative to the workspace.
    """

    def __init__(self, message: str, paths: list[str]) -> None:
        super().__init__(message)
        self.paths = paths


class NothingToUndo(UndoError, LookupError):
    """The thread has no recorded change that fits the request."""
