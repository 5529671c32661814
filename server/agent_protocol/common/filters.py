"""The LangGraph server's filters: JSON containment, as PostgreSQL's `@>`.

Thread and assistant searches filter `metadata` (and a thread's `values`) by it.
"""

from __future__ import annotations

from typing import Any


def contains(whole: Any, part: Any) -> bool:
    """Whether `whole` contains `part`: every key of a dict, every item of a list, deeply."""
    if isinstance(whole, dict) and isinstance(part, dict):
        return all(k in whole and contains(whole[k], v) for k, v in part.items())
    if isinstance(whole, list) and isinstance(part, list):
        return all(any(contains(w, p) for w in whole) for p in part)
    return bool(whole == part)
