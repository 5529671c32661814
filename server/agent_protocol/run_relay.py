"""A door run's stream sent to the other workers: its events, numbered, relayed and kept.

On PostgreSQL the worker running a run maps its items (DuckLM's events and the graph's
chunks) to the LangGraph events of the run's modes, numbers them as `joining.py` does
(so an event's SSE id is the same on every worker), and hands each to the relay as a
journaled event (`ducklm/stores/relay/journal.py`): a `NOTIFY` for the followers
listening now, and a row for one that comes, or comes back, later. After the last event
comes `END`, the stream's end. `elsewhere.py` follows it on another worker.

Why the mapped events and not the raw chunks: a follower that starts mid-run cannot
rebuild them (mode `messages` accumulates each message over its chunks, and the ids
count every event since the start), and they are what is sent anyway.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ducklm.server.agent_protocol.schemas import StreamMode
from ducklm.server.agent_protocol.streaming import WireEvent, encode, map_items
from ducklm.server.tasks import LiveTask
from ducklm.stores.relay import Relay

log = logging.getLogger(__name__)

END = "end"
"""The key of the item after a run's last event: the stream has ended."""
_relaying: set[asyncio.Task[None]] = set()
"""The relaying tasks (held: the loop keeps only weak references)."""


def stream_of(run_id: str) -> str:
    """The journaled stream of the door's run `run_id`."""
    return f"ap_{run_id}"


def relay_run(live: LiveTask, run_id: str, modes: tuple[StreamMode, ...], relay: Relay) -> None:
    """Relay the run's events to the other workers, from its start to its end."""
    task = asyncio.create_task(_relay(live, run_id, modes, relay), name=f"ducklm-ap-relay-{run_id}")
    _relaying.add(task)
    task.add_done_callback(_relaying.discard)


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
