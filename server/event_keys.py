"""Where an event is in its task, the same on every worker: the SSE id of `/v1` streams.

An audited event's key is its audit number (`"17"`); an unaudited one (a token, a
reasoning chunk, the hub's own `done` of a cancelled run) is the k-th after the last
audited one (`"17.3"`). The worker running the task and a worker following it through
the relay give every event the same key, so a client that reconnects anywhere with
`Last-Event-ID` gets exactly the events after it.
"""

from __future__ import annotations

from typing import NamedTuple

from ducklm.kit.events import Event


class EventKey(NamedTuple):
    """An event's place in its task; compared as a tuple, the task's order.

    `seq`: the last audit number so far; `k`: how many unaudited events since (0 for the
    audited event itself).
    """

    seq: int
    k: int = 0

    def __str__(self) -> str:
        return key_text(self)


START = EventKey(0, 0)
"""Before the task's first event."""


def parse_key(text: str | None) -> EventKey | None:
    """`Last-Event-ID` as a key; `None` when absent or not one of this door's ids."""
    seq, _, k = (text or "").strip().partition(".")
    if not seq.isdigit() or not (k.isdigit() or k == ""):
        return None
    return EventKey(int(seq), int(k or 0))


def key_after(last: tuple[int, int], item: Event) -> tuple[int, int]:
    """The key of `item`, the event that follows the one at `last` (a plain tuple)."""
    seq = item.get("seq")
    return (seq, 0) if seq.__class__ is int else (last[0], last[1] + 1)


def key_text(key: tuple[int, int]) -> str:
    """A key as its SSE id (a plain tuple too: the hub keeps those, they cost less)."""
    return str(key[0]) if key[1] == 0 else f"{key[0]}.{key[1]}"
