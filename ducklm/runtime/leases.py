"""The heartbeat: a process renews the leases of its runs while it lives (PostgreSQL).

`DuckLM.open` keeps it going for every process that runs runs (a server, the CLI, the
library), so only a process that died, hung or lost the database leaves its leases to
expire. On SQLite there are no leases and nothing runs here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from ducklm.stores import RunStores
from ducklm.stores.leases import RunLeases

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def keep_leases(stores: RunStores) -> AsyncIterator[None]:
    """Renew this process's leases every heartbeat until the block ends."""
    leases = stores.runs.leases
    if leases is None:
        yield
        return
    beat = asyncio.create_task(_beat(leases), name="ducklm-lease-heartbeat")
    try:
        yield
    finally:
        beat.cancel()
        await asyncio.gather(beat, return_exceptions=True)


async def _beat(leases: RunLeases) -> None:
    while True:
        await asyncio.sleep(leases.heartbeat_s)
        try:
            await leases.renew()
        except Exception:  # a database hiccup must not end the heartbeat
            log.warning("could not renew the leases of this process's runs", exc_info=True)
