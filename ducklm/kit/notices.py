"""Notices a person needs once, not on every turn: e.g. "the critic could not review".

A reviewer that fails on a small model tends to fail turn after turn; an `error` event
each time buries the answers under the same line. The log keeps every failure; the
person is told once per conversation and role. The memory is the process's (a restart
tells again) and bounded.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

MAX_KEYS = 4096


class OnceNotices:
    """Remembers which notices were shown; `first(key)` is true only the first time."""

    def __init__(self, max_keys: int = MAX_KEYS) -> None:
        self._shown: OrderedDict[Hashable, None] = OrderedDict()
        self._max = max_keys

    def first(self, key: Hashable) -> bool:
        """Whether the notice `key` has not been shown yet (and mark it shown)."""
        if key in self._shown:
            self._shown.move_to_end(key)
            return False
        self._shown[key] = None
        if len(self._shown) > self._max:
            self._shown.popitem(last=False)
        return True
