"""DuckLM's tables without the models: what operator commands open.

`ducklm threads`, `events` and `history` must work beside a running server or chat, so
they open only the databases: no embedding model to load, no embedded Qdrant lock to
take. Startup recovery runs here too, so what they show is the truth.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ducklm.config.settings import Settings
from ducklm.runtime.recovery import recover_dead_runs
from ducklm.runtime.states import StateReader
from ducklm.stores import RunStores, open_database
from ducklm.stores.owner import ProcessOwner
from ducklm.stores.private import secure_data_dir

SLOW_S = 1.0


@asynccontextmanager
async def open_operator_stores(settings: Settings) -> AsyncIterator[RunStores]:
    """DuckLM's own tables, after marking runs whose process died."""
    await asyncio.to_thread(secure_data_dir, settings.data_dir)
    owner = await asyncio.to_thread(ProcessOwner.current)
    async with open_database(settings.database_location) as db:
        stores = RunStores.on(db, owner)
        await recover_dead_runs(stores)
        yield stores


@asynccontextmanager
async def open_history(settings: Settings) -> AsyncIterator[StateReader]:
    """The threads' states, read through the graph on its checkpointer (it runs no node)."""
    # Imported here: the graph and the checkpointer's state types bring in the nodes,
    # tools, model clients and Qdrant (about 5 s here), which `threads` and `events` need
    # none of.
    from ducklm.graph.builder import build_graph  # noqa: PLC0415
    from ducklm.stores.checkpoints import open_checkpointer  # noqa: PLC0415

    await asyncio.to_thread(secure_data_dir, settings.data_dir)
    async with open_checkpointer(settings.checkpoint_location) as saver:
        yield StateReader(build_graph().compile(checkpointer=saver, name="ducklm"))


@asynccontextmanager
async def notice_if_slow(text: str) -> AsyncIterator[None]:
    """Print `text` on stderr when the block takes longer than a second."""

    async def later() -> None:
        await asyncio.sleep(SLOW_S)
        print(text, file=sys.stderr, flush=True)

    notice = asyncio.create_task(later())
    try:
        yield
    finally:
        notice.cancel()
