"""The Store API's `filter` of a search: which items' values match, as LangGraph's stores do.

A filter maps a value's top-level keys to what they must hold: a plain value (equal; a
dict compares its keys recursively, a list item by item) or a dict of operators (`$eq`,
`$ne`, `$gt`, `$gte`, `$lt`, `$lte`), as `langgraph.store.memory.InMemoryStore` reads it.
A comparison of a non-number with `$gt`...`$lte` does not match (LangGraph's raises).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

_ORDER: dict[str, Callable[[float, float], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}
OPERATORS = frozenset({"$eq", "$ne", *_ORDER})


def check_filter(filter_: dict[str, Any]) -> dict[str, Any]:
    """`filter_` unchanged, once every operator in it is known.

    Raises:
        ValueError: An operator other than `OPERATORS`, named in the message.
    """
    for condition in filter_.values():
        if isinstance(condition, dict):
            unknown = sorted(k for k in condition if k.startswith("$") and k not in OPERATORS)
            if unknown:
                known = ", ".join(sorted(OPERATORS))
                raise ValueError(f"unknown filter operator {unknown[0]!r} (known: {known})")
            check_filter(condition)
    return filter_


def matches(value: dict[str, Any], filter_: dict[str, Any] | None) -> bool:
    """Whether `value` holds what `filter_` asks for (every value matches no filter)."""
    return not filter_ or all(_compare(value.get(k), want) for k, want in filter_.items())


def _compare(held: Any, want: Any) -> bool:
    if isinstance(want, dict):
        if any(k.startswith("$") for k in want):
            return all(_apply(held, op, operand) for op, operand in want.items())
        return isinstance(held, dict) and matches(held, want)
    if isinstance(want, (list, tuple)):
        return (
            isinstance(held, (list, tuple))
            and len(held) == len(want)
            and all(_compare(h, w) for h, w in zip(held, want, strict=True))
        )
    return bool(held == want)


def _apply(held: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(held == operand)
    if op == "$ne":
        return bool(held != operand)
    try:
        return _ORDER[op](float(held), float(operand))
    except (TypeError, ValueError):  # None, text, a dict: not comparable, so no match
        return False
