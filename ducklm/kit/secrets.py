"""Secrets passed out of band: a sudo password never enters a checkpoint.

A resume value is stored in the checkpoint's writes table, so the password itself cannot
be the resume value. The person's password goes into this in-memory vault and the run
is resumed with a one-time token; the tool node takes the password out (which removes
it), feeds it to `sudo -S` on stdin, and forgets it. A token is single-use and expires.
A step with several sudo calls checks its tokens with `holds` while it asks, and takes
them all at once with `take_all` only when every question is answered.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Collection
from dataclasses import dataclass, field

TOKEN_TTL_S = 300.0


@dataclass
class SecretVault:
    """One-time tokens for secrets held in this process's memory only."""

    ttl_s: float = TOKEN_TTL_S
    _items: dict[str, tuple[str, float]] = field(default_factory=dict, repr=False)

    def put(self, secret: str) -> str:
        """Hold `secret` and return the token that takes it out once."""
        self._expire()
        token = secrets.token_urlsafe(24)
        self._items[token] = (secret, time.monotonic() + self.ttl_s)
        return token

    def take(self, token: str) -> str | None:
        """The secret for `token`, removed from the vault; `None` if unknown or expired."""
        self._expire()
        item = self._items.pop(token, None)
        return item[0] if item else None

    def holds(self, token: str) -> bool:
        """Whether `token` would still give its secret; nothing is taken."""
        self._expire()
        return token in self._items

    def take_all(self, tokens: Collection[str]) -> dict[str, str] | None:
        """The secrets for `tokens` by token, all removed; `None` (taking none) if any is gone.

        All or nothing, so a caller that must ask again for one secret still finds the
        others where it left them.
        """
        self._expire()
        if any(token not in self._items for token in tokens):
            return None
        return {token: self._items.pop(token)[0] for token in set(tokens)}

    def _expire(self) -> None:
        now = time.monotonic()
        for token in [t for t, (_, until) in self._items.items() if until < now]:
            del self._items[token]
