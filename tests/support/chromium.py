"""One Chromium process shared by a test session's browser tests, reached over DevTools.

Started as the probe of this machine starts it: headless, no sandbox (the tests run as
root), and no background networking (this machine's closed network refuses it, many
connections at a time). Its profile is a temporary folder; each test makes contexts of
its own in it, which are as separate as fresh profiles.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)
LISTENING = re.compile(r"DevTools listening on (ws://\S+)")
START_LINES = 200


@contextmanager
def shared_chromium(executable: str) -> Iterator[str]:
    """Run Chromium until the block ends; yield its DevTools WebSocket endpoint."""
    profile = tempfile.mkdtemp(prefix="ducklm-chromium-")
    process = subprocess.Popen(
        [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield _endpoint(process)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()
        shutil.rmtree(profile, ignore_errors=True)


def _endpoint(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    said: list[str] = []
    for _ in range(START_LINES):
        line = process.stderr.readline()
        if not line:
            break
        said.append(line.rstrip())
        if found := LISTENING.search(line):
            # Chromium goes on logging to stderr: drain it, or a full pipe would stall it.
            threading.Thread(target=_drain, args=(process.stderr,), daemon=True).start()
            return found.group(1)
    raise RuntimeError("Chromium did not start: " + "\n".join(said[-20:]))


def _drain(stream: IO[str]) -> None:
    for _ in stream:
        pass
