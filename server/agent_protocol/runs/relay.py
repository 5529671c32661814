"""A door run's stream sent to the other workers when one asks: numbered, relayed, kept.

On PostgreSQL a follower on another worker (`runs/elsewhere.py`) asks for a run's stream on
`ASKS`. The worker holding the run (running, or ended and kept for resuming) then maps
its items (DuckLM's events and the graph's chunks) to the LangGraph events of the run's
modes from its start, numbers them as `streaming/joining.py` does (so an event's SSE id is the same
on every worker), and hands each to the relay as a journaled event
(`ducklm/stores/relay/journal.py`): a `NOTIFY` for the followers listening now, and a row
for one that comes, or comes back, later. After the last event comes `END`.

Why on asking: a relayed door run on PostgreSQL took 1.30x its time to the first token
and 1.25x its time to the end (`scripts/bench/ap_relay_cost.py`, 2026-12-03, load 2.5),
a cost every run paid when all were relayed, though most are followed on the worker
running them; the worker holding a run has all its items in memory, so a late ask
loses nothing. Why the mapped events and not the raw
chunks: a follower that starts mid-run cannot rebuild them (mode `messages` accumulates
each message over its chunks, and the ids count every event since the start).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from ducklm.server.agent_protocol.common.schemas import StreamMode
from ducklm.server.agent_protocol.streaming.events import WireEvent, encode, map_items
from ducklm.server.agent_protocol.streaming.joining import RunHandle, RunStreams
from ducklm.server.tasks import LiveTask
from ducklm.stores.relay import Relay

log = logging.getLogger(__name__)

END = "end"
"""The key of the item after a run's last event: the stream has ended."""
ASKS = "ap_asks"
"""The stream followers ask on: a notice keyed by the run id whose stream they want."""
TRACK_WAIT_S = 0.5
"""How long an ask waits for a run that has just started to be tracked here."""
KEEP_ANSWERED = 1024
"""Runs remembered as relayed already (asked again, they are not journaled twice)."""
RELISTEN_S = 1.0


def stream_of(run_id: str) -> str:
    """The journaled stream of the door's run `run_id`."""
    return f"ap_{run_id}"


def ask(relay: Relay, run_id: str) -> None:
    """Ask whichever worker holds `run_id` to relay its stream (again is harmless)."""
    relay.send(ASKS, run_id, {})


@contextlib.asynccontextmanager
async def relaying_on_ask(streams: RunStreams, relay: Relay | None) -> AsyncIterator[None]:
    """Answer other workers' asks for the runs this worker holds, until the block ends."""
    if relay is None:  # SQLite: one process holds every run
        yield
        return
    answering = _Answering(streams, relay)
    task = asyncio.create_task(answering.serve(), name="ducklm-ap-relay-asks")
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, *answering.relaying, return_exceptions=True)


class _Answering:
    """The asks this worker answers, and the runs it relays."""

    def __init__(self, streams: RunStreams, relay: Relay) -> None:
        self._streams = streams
        self._relay = relay
        self._answered: dict[str, None] = {}
        self.relaying: set[asyncio.Task[None]] = set()

    async def serve(self) -> None:
        while True:
            async with self._relay.subscribe(ASKS) as inbox:
                while (notice := await inbox.get()) is not None:
                    if notice.key not in self._answered:
                        self._start(notice.key)
            await asyncio.sleep(RELISTEN_S)  # the connection broke: listen again

    def _start(self, run_id: str) -> None:
        self._answered[run_id] = None
        while len(self._answered) > KEEP_ANSWERED:
            del self._answered[next(iter(self._answered))]
        task = asyncio.create_task(self._answer(run_id), name=f"ducklm-ap-relay-{run_id}")
        self.relaying.add(task)
        task.add_done_callback(self.relaying.discard)

    async def _answer(self, run_id: str) -> None:
        handle = await self._held(run_id)
        if handle is None:  # another worker's, or not followable: its holder answers
            self._answered.pop(run_id, None)
            return
        try:
            live = await asyncio.shield(handle.started)
        except asyncio.CancelledError:
            if not handle.started.cancelled():
                raise
            return  # cancelled while enqueued: the follower reads that from its row
        except Exception:
            return  # it could not start: the follower reads why from its row
        await _relay(live, run_id, handle.modes, self._relay)

    async def _held(self, run_id: str) -> RunHandle | None:
        for _ in range(int(TRACK_WAIT_S / 0.05)):
            if (handle := self._streams.get(run_id)) is not None:
                return handle
            await asyncio.sleep(0.05)
        return None


def as_item(event: WireEvent) -> dict[str, Any]:
    """An event as journaled (already encoded: a run's state is read when it happens)."""
    return {"event": event.event, "json": event.json, "interrupted": event.interrupted}


def from_item(key: int, item: dict[str, Any]) -> WireEvent:
    """A journaled event as this worker sends it, with its id."""
    return WireEvent(item["event"], item["json"], bool(item.get("interrupted")), str(key))


async def _relay(live: LiveTask, run_id: str, modes: tuple[StreamMode, ...], relay: Relay) -> None:
    stream = stream_of(run_id)
    index = 0
    try:
        async for name, payload in map_items(live.follow_wire(), modes):
            index += 1
            relay.keep(stream, index, as_item(encode(name, payload)))
    except Exception:  # the run goes on; its followers elsewhere get its end
        log.exception("the stream of run %s is not relayed past event %d", run_id, index)
    finally:  # a cancelled run ends its stream too
        relay.keep(stream, index + 1, {END: True})
    try:
        await relay.journal.purge()
    except Exception:  # the next run's end purges them
        log.warning("could not purge the relay journal", exc_info=True)
