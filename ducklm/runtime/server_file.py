"""`<data dir>/server.json`: where the running `ducklm serve` answers, for other commands.

`ducklm serve` writes it once its socket is bound and removes it when it stops; `ducklm
open` reads it to ask that server for a login code. The whole format, kept small on
purpose for any client that needs to find the server:

    {"url": "http://127.0.0.1:8000", "pid": 12345}

`url` is the base URL to use from this machine (no trailing slash), `pid` the server's
process. A server killed without a chance to clean up leaves a stale file: a client
that gets no answer from `url` should say so, not trust the file. Mode 600, like the
token file beside it: it says where that token is accepted.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ducklm.config.data_dir import DataDir
from ducklm.stores.private import replace_private_file


@dataclass(frozen=True)
class RunningServer:
    """What `server.json` says."""

    url: str
    """Base URL of the server, without a trailing slash."""
    pid: int
    """The server's process id."""


def server_file(data_dir: Path) -> Path:
    """Where the file is."""
    return DataDir(data_dir).server


async def write_server_file(data_dir: Path, url: str) -> RunningServer:
    """Record this process as the server at `url`."""
    running = RunningServer(url.rstrip("/"), os.getpid())
    await asyncio.to_thread(_write, server_file(data_dir), running)
    return running


async def read_server_file(data_dir: Path) -> RunningServer | None:
    """The recorded server, or `None` when there is no (readable) file."""
    return await asyncio.to_thread(_read, server_file(data_dir))


async def remove_server_file(data_dir: Path, running: RunningServer) -> None:
    """Remove the file if it still names `running` (another server may have taken over)."""
    await asyncio.to_thread(_remove_if, server_file(data_dir), running)


def _write(path: Path, running: RunningServer) -> None:
    replace_private_file(path, json.dumps({"url": running.url, "pid": running.pid}))


def _read(path: Path) -> RunningServer | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return RunningServer(str(data["url"]), int(data["pid"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _remove_if(path: Path, running: RunningServer) -> None:
    if _read(path) == running:
        path.unlink(missing_ok=True)
