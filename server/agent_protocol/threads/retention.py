"""Deleting threads: by the client, by an assistant's delete, and by their TTL's sweeper.

A thread is deleted whole, as deleting a conversation does (`DuckLM.forget_thread`:
checkpoints, tasks, runs, events, episodes), with the door's own rows. A thread that a
run holds or waits for is never deleted: the client gets a `409`, the sweeper tries
again next time. The sweeper runs in the door's lifespan every `SWEEP_INTERVAL_S`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from ducklm.runtime.facade import DuckLM
from ducklm.server.agent_protocol.common.deps import Door
from ducklm.server.agent_protocol.threads.catalog import all_threads
from ducklm.server.tasks import TaskHub, ThreadBusy

log = logging.getLogger(__name__)

SWEEP_INTERVAL_S = 60.0
"""How often expired threads are looked for: a TTL is whole minutes at the least useful."""


async def delete_thread(thread_id: str, *, duck: DuckLM, door: Door, hub: TaskHub) -> None:
    """Delete the thread and everything of it.

    Raises:
        ThreadBusy: A run holds it.
    """
    async with hub.claim(thread_id):
        await door.queue.forget_thread(thread_id)  # its enqueued runs never start
        await duck.forget_thread(thread_id)  # as deleting a conversation does
        await door.threads.delete(thread_id)
        await door.runs.forget_thread(thread_id)
        await door.ttl.delete(thread_id)


async def delete_assistant_threads(
    assistant_id: str, *, duck: DuckLM, door: Door, hub: TaskHub
) -> list[str]:
    """Delete the threads whose metadata names `assistant_id` (busy ones stay)."""
    deleted = []
    for record in await all_threads(duck, door.threads):
        if record.metadata.get("assistant_id") == assistant_id:
            with contextlib.suppress(ThreadBusy):
                await delete_thread(record.thread_id, duck=duck, door=door, hub=hub)
                deleted.append(record.thread_id)
    return deleted


async def sweep_expired(
    *, duck: DuckLM, door: Door, hub: TaskHub, now: float | None = None
) -> list[str]:
    """Delete every idle thread whose TTL has passed; returns their ids."""
    now = time.time() if now is None else now
    deleted = []
    for thread_id, ttl in (await door.ttl.all()).items():
        conversation = await duck.conversations.get(thread_id)
        if conversation is None:  # deleted another way (the web chat, the CLI)
            await door.ttl.delete(thread_id)
        elif ttl.expires_at(conversation.updated_at) <= now:
            with contextlib.suppress(ThreadBusy):
                await delete_thread(thread_id, duck=duck, door=door, hub=hub)
                deleted.append(thread_id)
    return deleted


async def sweep_forever(*, duck: DuckLM, door: Door, hub: TaskHub) -> None:
    """Sweep expired threads every `SWEEP_INTERVAL_S` until cancelled."""
    while True:
        await asyncio.sleep(SWEEP_INTERVAL_S)
        try:
            if deleted := await sweep_expired(duck=duck, door=door, hub=hub):
                log.info("deleted %d threads past their TTL", len(deleted))
        except Exception:  # a failed sweep must not end the sweeper: the next one retries
            log.exception("the thread TTL sweep failed")
