"""A loopback HTTP server that records the POSTs it gets: a webhook's receiver for tests.

It runs in a thread of its own (the test's event loop never blocks on it). Each path
answers 200 unless told otherwise (`answer`: a status, and headers such as `Location`).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WAIT_S = 30.0


@dataclass(frozen=True)
class Received:
    """One POST: its path and JSON body."""

    path: str
    body: dict[str, Any]


@dataclass
class Receiver:
    """The running receiver: its base URL and what it got."""

    url: str
    received: list[Received] = field(default_factory=list)
    answers: dict[str, tuple[int, dict[str, str]]] = field(default_factory=dict)

    def answer(self, path: str, status: int, **headers: str) -> None:
        """Answer POSTs to `path` with `status` (and `headers`)."""
        self.answers[path] = (status, headers)

    async def wait_for(self, count: int) -> list[Received]:
        """The POSTs once there are `count` of them, or fail after `WAIT_S`."""
        async with asyncio.timeout(WAIT_S):
            while len(self.received) < count:  # noqa: ASYNC110  the server is a thread
                await asyncio.sleep(0.02)
        return list(self.received)


@contextmanager
def webhook_receiver() -> Iterator[Receiver]:
    """A receiver on 127.0.0.1 at a free port until the block ends."""
    holder: list[Receiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            receiver = holder[0]
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            receiver.received.append(Received(self.path, body))
            status, headers = receiver.answers.get(self.path, (200, {}))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(Receiver(f"http://127.0.0.1:{server.server_address[1]}"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder[0]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
