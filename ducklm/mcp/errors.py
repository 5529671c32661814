"""Failures of MCP servers, in words for people."""

from __future__ import annotations


def failure_words(exc: BaseException) -> str:
    """A failure in a few words: an exception group is named by its first real member."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"program not found ({exc.filename or exc})"
    return (str(exc).strip() or type(exc).__name__)[:300]
