"""One credential found in a text: where it lies and what kind it is."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Found:
    """The span `[start, end)` of a secret value in the scanned text, and its kind."""

    start: int
    end: int
    kind: str
    """What it is, as a marker names it: `AWS secret key`, `password`, `private key`."""
