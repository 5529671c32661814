"""`<data dir>/browser_sessions.json`: the logged-in browsers, kept across restarts.

It holds no secret a browser could log in with: each session is a digest of its id
(the cookie's value) and when it ends, on the wall clock (a restart, even a reboot,
keeps the time). The server (`ducklm.server.session.Logins`) reads it when it starts
and rewrites it whole (0600, renamed into place) after each login, logout or
revocation; `ducklm open --revoke-all` empties it when no server runs. The format:

    {"version": 1, "sessions": {"<sha256 hex of the id>": {"expires": 1764000000.0}}}

All of it is blocking: call through `asyncio.to_thread`.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from ducklm.stores.private import create_private_file, replace_private_file

VERSION = 1
log = logging.getLogger(__name__)


def read_sessions(path: Path) -> dict[str, float]:
    """Each stored session's digest and end (seconds since the epoch); `{}` when none.

    A file that cannot be read as this format logs everyone out, said in the log: the
    browsers log in again, which is the safe side of a damaged file.
    """
    create_private_file(path)  # also tightens a file an editor left readable
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
        found = data["sessions"] if data.get("version") == VERSION else {}
        return {str(key): float(value["expires"]) for key, value in found.items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        log.warning("%s is not a sessions file DuckLM can read: browsers log in again", path)
        return {}


def write_sessions(path: Path, sessions: dict[str, float]) -> None:
    """Replace the file's sessions with `sessions` (digest -> end)."""
    body = {"version": VERSION, "sessions": {k: {"expires": v} for k, v in sessions.items()}}
    replace_private_file(path, json.dumps(body, indent=1))
