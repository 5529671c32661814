"""Whether DuckLM's local model server is up, restarting, or down and why: this process's view.

The keeper (`ducklm.models.local.keeper`) restarts the server that `ducklm serve`
started, and is the first to know that a crash will be followed by a restart. It sets
the state here; a model call whose connection is refused meanwhile waits for the server
to come back (`ducklm.models.local.restart_wait`), `/health` shows the state, and a failed
run's message never tells the person to start a server that DuckLM is restarting.

One registry per process (`LOCAL_SERVERS`), keyed by the server's URL: the keeper runs
before the app exists (`ducklm serve` starts the model server first) and the model
clients are built without settings, so a registry is what both can reach. Only a keeper
registers: a server started by `ducklm llama start` has none, and nothing waits for it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from ducklm.models.local.crash import same_server
from ducklm.models.local.exit_status import Ending

Status = Literal["up", "restarting", "down"]


@dataclass(frozen=True)
class ServerState:
    """One moment of a kept server's life."""

    status: Status
    """`up`: it runs (or DuckLM has not seen it end); `restarting`: it crashed and DuckLM
    starts it again; `down`: it ended and DuckLM gave up (or it was stopped)."""
    ending: Ending | None = None
    """How it last ended (restarting, down)."""
    gave_up: str = ""
    """For `down`: why DuckLM stopped restarting it, a clause (`a crash loop`)."""
    since: float = field(default_factory=time.time)
    """When this state began, as a Unix time."""

    def cause(self) -> str:
        """What happened to it: `it crashed (SIGILL) at 2026-01-02 03:04:05`, or ""."""
        if self.ending is None:
            return ""
        return f"it {self.ending.label()} at {self.ending.when()}"

    def describe(self) -> str:
        """The state in a few words: `up`, `restarting: it crashed (SIGILL) at ...`."""
        if self.ending is None:
            return self.status
        what = f"{self.status}: {self.cause()}"
        return f"{what}; {self.gave_up}" if self.gave_up else what

    def failure(self, restart_wait_s: float) -> str | None:
        """What a model call that failed in this state says; None: nothing to add.

        Restarting, it names the crash and that DuckLM restarts the server, never a
        command to run; down, it says why DuckLM gave up and what to do.
        """
        if self.ending is None or not self.ending.crashed:
            return None  # stopped on purpose: the plain message says what to do
        crashed = f"The local model server {self.ending.label()} at {self.ending.when()}"
        if self.status == "down":
            advice = self.ending.advice()
            return f"{crashed}, and DuckLM stopped restarting it ({self.gave_up}): {advice}."
        return (
            f"{crashed}. DuckLM is restarting it, but it was not back within "
            f"{restart_wait_s:g} s (DUCK_MODEL_RESTART_WAIT_S): send your message again once it "
            "is up (/health says when)."
        )


class ServerWatch:
    """The state of one local server, set by its keeper and awaited by model calls."""

    def __init__(self, url: str, *, restart_wait_s: float, notice_s: float) -> None:
        """Watch the server at `url`.

        Args:
            url: Its base URL.
            restart_wait_s: How long a model call waits for a restart (`DUCK_MODEL_RESTART_WAIT_S`).
            notice_s: How long the keeper may take to see that the server is gone.
        """
        self.url = url
        self.restart_wait_s = restart_wait_s
        self.notice_s = notice_s
        self._state = ServerState("up")
        self._changed = asyncio.Event()
        self._late: ServerState | None = None  # a restart that outlasted a call's wait

    @property
    def state(self) -> ServerState:
        """The state now."""
        return self._state

    @property
    def outlasted(self) -> bool:
        """Whether the restart going on has outlasted a call's wait already."""
        return self._state is self._late

    def set(self, state: ServerState) -> None:
        """Move to `state` and wake whoever waits for a change."""
        self._state = state
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def changes_within(self, seconds: float) -> bool:
        """Wait up to `seconds` for the next change of state; whether one came."""
        try:
            async with asyncio.timeout(max(0.0, seconds)):
                await self._changed.wait()
        except TimeoutError:
            return False
        return True

    async def back_up(self, within_s: float) -> bool:
        """Wait while the server restarts, at most `within_s`; whether it is up then.

        A restart that outlasted one call's wait fails the calls after it at once (a
        node's retries, the next turn), until its state changes: waiting again would
        only make the turn fail later.
        """
        if self.outlasted:
            return False
        deadline = time.monotonic() + within_s
        while self._state.status == "restarting":
            if not await self.changes_within(deadline - time.monotonic()):
                self._late = self._state
                break
        return self._state.status == "up"


class LocalServers:
    """The local servers kept in this process, by URL."""

    def __init__(self) -> None:
        self._watches: list[ServerWatch] = []

    def find(self, url: str) -> ServerWatch | None:
        """The watch of the kept server that `url` (a base or a request URL) reaches."""
        for watch in reversed(self._watches):  # the newest first: a later keeper of that port
            if same_server(url, watch.url):
                return watch
        return None

    @contextmanager
    def kept(self, url: str, *, restart_wait_s: float, notice_s: float) -> Iterator[ServerWatch]:
        """Register a watch of the server at `url` for as long as the block runs."""
        watch = ServerWatch(url, restart_wait_s=restart_wait_s, notice_s=notice_s)
        self._watches.append(watch)
        try:
            yield watch
        finally:
            self._watches.remove(watch)


LOCAL_SERVERS = LocalServers()
"""This process's kept local servers (see the module's docstring for why one registry)."""
