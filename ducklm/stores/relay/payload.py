"""What one `NOTIFY` carries: a batch of a task's events, each with its place in the task.

PostgreSQL refuses a payload of 8000 bytes or more, so a batch is cut below `LIMIT`.
An event too large for a payload of its own goes as its audit number only (`event` is
`None`) and a follower reads its row; an unaudited one (a token, a reasoning chunk: a
few bytes) that is still too large is dropped with a warning, as it is nowhere stored.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any, NamedTuple

log = logging.getLogger(__name__)

LIMIT = 7900
"""Bytes of JSON per payload: under PostgreSQL's 8000, with room for the brackets."""
PREFIX = "ducklm_live_"


class Notice(NamedTuple):
    """One event as sent: its key (`"seq"` or `"seq.k"`) and the event.

    `event` is `None` when only its audit number fitted: a follower reads the row.
    """

    key: str
    event: dict[str, Any] | None


def channel_of(task_id: str) -> str:
    """The channel a task's events go on (an identifier of at most 63 bytes)."""
    return PREFIX + task_id.replace("-", "")


def dump(item: dict[str, Any]) -> str:
    """An event as compact JSON (what a notice and a journal row hold)."""
    return json.dumps(item, default=str, ensure_ascii=False, separators=(",", ":"))


def encode_one(key: str, item: dict[str, Any], dumped: str | None = None) -> str | None:
    """`[key, event]` as JSON; the key alone when too large; `None`: cannot be sent.

    `dumped`: the event already as `dump` made it (not made twice).
    """
    text = f"[{json.dumps(key)},{dumped if dumped is not None else dump(item)}]"
    if len(text.encode()) < LIMIT:
        return text
    if "." not in key:  # audited: a follower reads the row
        return json.dumps([key, None])
    log.warning("an unaudited %s event of %d bytes is not relayed", item.get("type"), len(text))
    return None


def batches(encoded: list[str]) -> Iterator[str]:
    """The encoded notices joined into payloads under `LIMIT` bytes, in order."""
    size, part = 2, list[str]()
    for text in encoded:
        grown = size + len(text.encode()) + 1
        if part and grown > LIMIT:
            yield "[" + ",".join(part) + "]"
            size, part = 2, list[str]()
            grown = 2 + len(text.encode()) + 1
        part.append(text)
        size = grown
    if part:
        yield "[" + ",".join(part) + "]"


def decode(payload: str) -> list[Notice]:
    """A payload's notices (a malformed one: none, logged)."""
    try:
        return [Notice(str(key), item) for key, item in json.loads(payload)]
    except (ValueError, TypeError):
        log.warning("a live-event payload that is not a batch was ignored")
        return []
