"""`ducklm serve`'s HTTP/1.1 connections: a slow client is cut off, not waited for.

uvicorn times out only the idle wait between two requests (`timeout_keep_alive`, reset by
every byte): a client that opens connections and sends each request's head a byte at a
time, or never finishes a body, holds them as long as it likes (120 such connections
were held open 30 s, none closed; an ASGI middleware cannot help, it runs only once a
head is whole). `DoorProtocol` is uvicorn's protocol with two deadlines:

- the head (request line and headers) must arrive whole within `header_timeout_s` of its
  first byte, or of the connection's opening for its first request (a socket that sends
  nothing at all is closed too);
- the body must arrive within `body_timeout_s` of the head, plus one second per KiB
  received, so a large upload at any usable speed goes on and a trickle does not. The
  clock stops while DuckLM itself is not reading (uvicorn's flow control paused it).

A head cut off answers `408` when some of it came (a bare socket is just closed, as a
browser's preconnect may be); a body cut off closes the connection, and the route sees
the client gone. One timer per connection, moved only when it fires: a chunk received
costs a few comparisons.

The parser is uvicorn's own choice (httptools when installed, else h11), with one fix:
httptools drops the scheme and host of an absolute-form target (`GET http://host/path`)
before the app sees it, so the exact-Host check could not refuse a foreign one.
`HttpToolsDoor` keeps the whole target in `raw_path`, as h11 does, and the guard
(`server/security.py`) checks its host and serves its path.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

if TYPE_CHECKING:
    _Protocol = H11Protocol  # what the mixin reads: both uvicorn protocols have it
else:
    _Protocol = object

BYTES_PER_SECOND = 1024
"""The body rate every extra second is earned at."""
TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: 33\r\n\r\nthe request head came too slowly\n"
)
log = logging.getLogger(__name__)


class DoorConfig(uvicorn.Config):
    """uvicorn's config with the two deadlines the door's protocol reads."""

    def __init__(
        self, app: Any, *, header_timeout_s: float, body_timeout_s: float, **kwargs: Any
    ) -> None:
        super().__init__(app, http=door_protocol(), **kwargs)
        self.header_timeout_s = header_timeout_s
        self.body_timeout_s = body_timeout_s


def door_protocol() -> type[asyncio.Protocol]:
    """`HttpToolsDoor` where httptools is installed (uvicorn's own choice), else `H11Door`."""
    try:
        from ducklm.server.httptools_door import HttpToolsDoor  # noqa: PLC0415  needs httptools
    except ImportError:
        return H11Door
    return HttpToolsDoor


class Deadlines(_Protocol):
    """The head and body deadlines of `DoorConfig`, over either uvicorn protocol."""

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self._header_s = getattr(config, "header_timeout_s", 10.0)
        self._body_s = getattr(config, "body_timeout_s", 30.0)
        self._head_by: float | None = None  # a head is coming: whole by then
        self._head_started = False
        self._body_by: float | None = None  # a body is coming: whole by then
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn's
        """Serve the connection; its first head is due `header_timeout_s` from now."""
        super().connection_made(transport)
        self._head_by = self.loop.time() + self._header_s
        self._arm(self._head_by)

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the deadlines with the connection."""
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Read `data`, then move the deadlines by what it completed."""
        cycle = self.cycle
        if self._head_by is None and (cycle is None or cycle.response_complete):
            self._head_by = self.loop.time() + self._header_s  # the next request's head
            self._arm(self._head_by)
        self._head_started = True
        super().data_received(data)
        self._track(cycle, len(data))

    def on_response_complete(self) -> None:
        """As uvicorn's; a pipelined request's head, already read, may start here."""
        cycle = self.cycle
        super().on_response_complete()
        self._track(cycle, 0)

    def _track(self, before: Any, received: int) -> None:
        if self.cycle is not before:  # a head came whole: uvicorn made its cycle
            self._head_by, self._head_started = None, False
            self._body_by = self.loop.time() + self._body_s if self.cycle.more_body else None
            if self._body_by is not None:
                self._arm(self._body_by)
        elif self._body_by is not None:
            more = self.cycle.more_body
            self._body_by = self._body_by + received / BYTES_PER_SECOND if more else None

    def _arm(self, when: float) -> None:
        if self._timer is not None and self._timer.when() <= when:
            return  # it fires first, and moves itself on to the next deadline
        self._disarm()
        self._timer = self.loop.call_at(when, self._check)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        self._timer = None
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            return  # closed, or handed to a WebSocket protocol
        now = self.loop.time()
        if self._head_by is not None and now >= self._head_by:
            self._cut_off("head", TIMED_OUT if self._head_started else b"")
            return
        if self._body_by is not None and self.flow.read_paused:
            self._body_by = max(self._body_by, now + self._body_s)  # DuckLM is not reading
        if self._body_by is not None and now >= self._body_by:
            self._cut_off("body", b"")
            return
        due = [t for t in (self._head_by, self._body_by) if t is not None]
        if due:
            self._arm(min(due))

    def _cut_off(self, part: str, answer: bytes) -> None:
        log.info("closed a connection from %s: its request %s came too slowly", self.client, part)
        self._head_by = self._body_by = None
        if answer and (self.cycle is None or self.cycle.response_complete):
            self.transport.write(answer)
        self.transport.close()


class H11Door(Deadlines, H11Protocol):
    """uvicorn's h11 protocol with the deadlines (h11 keeps an absolute target whole)."""
