"""Opening the memory stores: the policy's facts, and the episodes beside them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from ducklm.config.settings import Settings
from ducklm.memory.embeddings import open_embedder
from ducklm.memory.fusion import EPISODE_WEIGHT
from ducklm.memory.layout import collection_name
from ducklm.memory.store import MemoryStore
from ducklm.memory.table import MemoryTable
from ducklm.memory.vectors import open_vectors
from ducklm.stores.db import Database


@asynccontextmanager
async def open_memory(settings: Settings, db: Database) -> AsyncIterator[MemoryStore]:
    """Open Qdrant (embedded or server) and load the keyword index from SQLite.

    The embedding model loads later, on first use. A Qdrant that cannot open does not
    fail this: the store searches by keyword and every result says so.
    """
    async with AsyncExitStack() as stack:
        embedder = await stack.enter_async_context(open_embedder(settings))
        collection = collection_name(settings.embeddings_model)
        vectors = await stack.enter_async_context(open_vectors(settings, collection))
        store = MemoryStore(MemoryTable(db), embedder, vectors)
        await store.load()
        yield store


async def open_episodes(settings: Settings, db: Database, facts: MemoryStore) -> MemoryStore:
    """The episodes store: its own table and collection, the facts' model and Qdrant client.

    Embedded Qdrant allows one client per folder, so the episodes' collection goes
    through the facts' client; it closes when the facts' store does.
    """
    collection = collection_name(settings.embeddings_model, "episodes")
    table = MemoryTable(db, "episodes")
    store = MemoryStore(
        table,
        facts.embedder,
        facts.vectors.sibling(collection),
        weight=EPISODE_WEIGHT,
        follow_replies=True,
    )
    await store.load()
    return store
