"""The words, redirections and simple commands a parsed shell command is made of."""

from __future__ import annotations

from dataclasses import dataclass

GLOB_CHARS = "*?[{"

Pipes = tuple[tuple[int, int], ...]
"""(pipeline id, stage) pairs: where a command sits in nested pipelines."""


@dataclass(frozen=True)
class Word:
    """One word of a command, after bash's quote removal."""

    text: str
    """The word as the command receives it (exact only when `literal`)."""
    source: str
    """The word as written."""
    params: tuple[str, ...] = ()
    """Variables it expands (`$HOME` -> "HOME"); "?" for ones that cannot be named."""
    substituted: bool = False
    """It contains a command or process substitution, so its value is unknown."""
    tilde: bool = False
    """It starts with an unquoted `~`, which bash expands to a home folder."""
    inner: tuple[str, ...] = ()
    """Names of the commands its substitutions run (to spot `bash <(curl ...)`)."""

    @property
    def literal(self) -> bool:
        """Whether `text` is exactly what the command receives."""
        return not (self.params or self.substituted)


@dataclass(frozen=True)
class Redirect:
    """One redirection: `>`, `>>`, `<`, `2>&1`, `<<EOF` ..."""

    op: str
    target: Word | None
    """The file; None when a descriptor is duplicated or closed (`2>&1`, `>&-`)."""
    body: str | None = None
    """The text of a here-document."""


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command somewhere in the parse tree."""

    words: tuple[Word, ...]
    assignments: tuple[Word, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    pipes: Pipes = ()
    """(pipeline id, stage) of every pipeline it sits in, outermost first."""


@dataclass(frozen=True)
class ParsedCommand:
    """Everything a command would run, and its canonical text."""

    commands: tuple[SimpleCommand, ...]
    normalized: str
    functions: frozenset[str]
    fork_bombs: tuple[str, ...]
    """Functions that start themselves in a pipeline or in the background."""
    hidden: tuple[str, ...]
    """Reasons some code could not be read with certainty."""
