"""Whether the local model server DuckLM started has crashed, asked from another process.

A run, `ducklm doctor` and `ducklm llama status` each learn that the model server is
gone as a refused or dropped connection; when that server is the one `llama.pid`
records and its process is gone, the exit record says how it ended, so they can say
"crashed (SIGILL)" and what to do instead of "not reachable".
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlsplit

from ducklm.config.settings import Settings
from ducklm.models.local import server as llama
from ducklm.models.local.exit_status import Ending, read_ending

DEATH_WAIT_S = 2.0  # a dropped connection comes a moment before the process is reaped
LOCAL_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


async def last_ending(settings: Settings) -> Ending | None:
    """How the server DuckLM last started here ended; None while it runs or if none did."""
    record = await asyncio.to_thread(llama.read_record, settings.files.llama_pid)
    if record is None:
        return await asyncio.to_thread(read_ending, settings.files.llama_exit)
    if await asyncio.to_thread(llama.is_alive, record):
        return None
    return await asyncio.to_thread(llama.ending_of, settings, record)


async def local_crash(
    settings: Settings, url: str, *, wait_s: float = DEATH_WAIT_S
) -> Ending | None:
    """How the recorded local server at `url` crashed, or None (not it, or it runs).

    Args:
        settings: Where the pid and exit records are (the data dir).
        url: Any URL on the server that failed (a base URL or a request's URL).
        wait_s: How long to wait for a dying process to be gone.
    """
    record = await asyncio.to_thread(llama.read_record, settings.files.llama_pid)
    if record is None or not same_server(url, record.url):
        return None
    deadline = time.monotonic() + wait_s
    while await asyncio.to_thread(llama.is_alive, record):
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(llama.POLL_S / 4)
    ending = await asyncio.to_thread(llama.ending_of, settings, record)
    return ending if ending.crashed else None


def same_server(url: str, other: str) -> bool:
    """Whether two URLs reach the same local host and port (`localhost` is 127.0.0.1)."""
    mine, theirs = urlsplit(url), urlsplit(other)
    if mine.port is None or mine.port != theirs.port:
        return False
    return {mine.hostname, theirs.hostname} <= LOCAL_NAMES or mine.hostname == theirs.hostname
