"""How `ducklm serve` stops on SIGINT or SIGTERM: gracefully, and within `DEADLINE_S`.

Whatever its tools are doing: a file tool blocked in the kernel, a long command in the
sandbox, a client waiting on `POST /v1/chat`, an open SSE stream, a question waiting
for a person. The first signal:

- tells uvicorn to stop: it takes no new connections, and the open ones get `GRACE_S`
  to end before their tasks are cancelled (`timeout_graceful_shutdown`; without it a
  request waiting for a hung run held the shutdown for good, as the hub cancels runs
  only after the requests have ended);
- cancels every run at once (`TaskHub.close`): each is recorded as cancelled and its
  followers get `done`, so waiting requests and streams end by themselves;
- arms the deadline: if the process is still there `DEADLINE_S` later, it ends there
  and then (`os._exit`). What would still hold it is a thread blocked in the kernel:
  `asyncio.run` joins the default executor's threads, and `concurrent.futures` joins
  every executor thread at exit; Python can stop neither.

A second signal stops waiting for open requests and the app's shutdown (`force_exit`).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from typing import Any

from ducklm.cli.exit_codes import EXIT_INTERRUPTED

GRACE_S = 3  # uvicorn takes whole seconds
DEADLINE_S = 8.0
OVERDUE = (
    "ducklm: still stopping {seconds:g} s after the signal (a call that does not "
    "return, e.g. on a hung file system): exiting now"
)


class Stopping:
    """The signal handler of `ducklm serve`: stop uvicorn, cancel the runs, arm the deadline."""

    def __init__(self, server: Any, app: Any) -> None:
        self.server = server
        """The `uvicorn.Server` serving `app`."""
        self.app = app
        self.signals: list[int] = []
        """The signals received, in order."""
        self._closing: asyncio.Task[None] | None = None

    def __call__(self, sig: int) -> None:
        """Handle `sig` (from `loop.add_signal_handler`, on the loop)."""
        self.signals.append(sig)
        if self.server.should_exit:
            self.server.force_exit = True
            return
        self.server.should_exit = True
        arm_deadline(DEADLINE_S)
        hub = getattr(self.app.state, "hub", None)  # set once the lifespan has started
        if hub is not None:
            self._closing = asyncio.get_running_loop().create_task(
                hub.close(), name="ducklm-stop-runs"
            )


def arm_deadline(seconds: float) -> threading.Timer:
    """End the process `seconds` from now (exit code 130) unless it has ended by then."""
    timer = threading.Timer(seconds, _exit_now, args=(seconds,))
    timer.daemon = True  # it must not be what keeps the process alive
    timer.name = "ducklm-stop-deadline"
    timer.start()
    return timer


def _exit_now(seconds: float) -> None:
    print(OVERDUE.format(seconds=seconds), file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(EXIT_INTERRUPTED)
