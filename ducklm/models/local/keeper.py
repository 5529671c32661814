"""Keeps the local model server that `ducklm serve` started running: one restart per crash.

A crash is restarted after a pause that doubles with each restart. A second crash soon
after a restart (within `crash_window_s`) is a crash loop, which a restart cannot cure
(a build for another CPU dies of SIGILL every time): the keeper then stops and says so
once, and DuckLM goes on serving, its runs failing with the crash's message, instead of
restarting the server in a storm. The keeper's view of the server (up, restarting, or
down and why) is a `ServerWatch` (`ducklm.models.local.state`): model calls wait on it
while the server restarts, and `/health` shows it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from ducklm.config.settings import Settings
from ducklm.models.local import server as llama
from ducklm.models.local.crash import last_ending
from ducklm.models.local.state import ServerState, ServerWatch

_LOOP = "it crashed again {since:.0f} s after its restart: a crash loop"


@dataclass(frozen=True, kw_only=True)
class RestartPolicy:
    """When the keeper restarts a crashed server."""

    backoff_s: float = 2.0
    """Pause before the first restart; each later restart waits twice as long."""
    max_backoff_s: float = 60.0
    """The longest pause."""
    crash_window_s: float = 120.0
    """A crash within this long after a restart is a crash loop: no more restarts."""
    poll_s: float = 1.0
    """How often to check that the server still runs."""


async def keep_running(
    settings: Settings,
    record: llama.Record,
    progress: llama.Progress,
    policy: RestartPolicy,
    watch: ServerWatch,
) -> None:
    """Watch the server of `record`; restart it after a crash, stop on a crash loop.

    Returns when the server was stopped on purpose (`ducklm llama stop`), when a restart
    failed, or on a crash loop; each says why through `progress`, and `watch` holds the
    server's state throughout (`restarting` from the moment a crash is seen). Cancel it
    to stop watching.
    """
    restarts = 0
    restarted_at: float | None = None
    while True:
        await _gone(record, policy.poll_s)
        ending = await last_ending(settings)
        if ending is None or not ending.crashed:
            # Stopped on purpose, or replaced by another start: not ours to restart.
            watch.set(ServerState("down", ending, gave_up="it was stopped"))
            return
        since = None if restarted_at is None else time.monotonic() - restarted_at
        if since is not None and since < policy.crash_window_s:
            watch.set(ServerState("down", ending, gave_up=_LOOP.format(since=since)))
            progress(_crash_loop(ending.label(), since, ending.advice()))
            return
        watch.set(ServerState("restarting", ending))
        pause = min(policy.max_backoff_s, policy.backoff_s * 2**restarts)
        progress(
            f"the local model server {ending.label()} at {ending.when()}; restarting it in "
            f"{pause:g} s. If it crashes again: {ending.remedy()}"
        )
        await asyncio.sleep(pause)
        try:
            record, _ = await llama.start(settings, progress)
        except (llama.LocalServerUnavailable, llama.LocalServerFailed) as exc:
            watch.set(ServerState("down", ending, gave_up="it did not come back"))
            progress(f"the local model server did not come back, so it stays down. {exc}")
            return
        watch.set(ServerState("up"))
        restarts += 1
        restarted_at = time.monotonic()


async def _gone(record: llama.Record, poll_s: float) -> None:
    # Another process's end has no event to await here: look at /proc now and then.
    while await asyncio.to_thread(llama.is_alive, record):  # noqa: ASYNC110  see above
        await asyncio.sleep(poll_s)


def _crash_loop(label: str, since: float, advice: str) -> str:
    return (
        f"the local model server {label} again {since:.0f} s after its restart: a crash "
        f"loop, so it stays down. {advice[:1].upper()}{advice[1:]}. DuckLM goes on serving; "
        "its runs fail with this message until the model server runs again"
    )
