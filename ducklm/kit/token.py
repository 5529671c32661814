"""The server's access token: from `DUCK_API_TOKEN`, or created once in the data dir."""

from __future__ import annotations

import asyncio
import hmac
import os
import secrets
from pathlib import Path

from ducklm.config.settings import Settings


async def load_token(settings: Settings, *, create: bool = True) -> str | None:
    """The configured token, else the stored one, else (with `create`) a new stored one."""
    if settings.api_token:
        return settings.api_token
    return await asyncio.to_thread(_read_or_create, settings.files.token, create)


def _read_or_create(path: Path, create: bool) -> str | None:
    try:
        stored = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        stored = ""
    if stored or not create:
        return stored or None
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    # Created owner-only from the start: the token is the key to every action.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token


def same_token(given: str | None, expected: str) -> bool:
    """Compare in constant time, so timing does not leak how much of a guess was right."""
    if not given:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())
