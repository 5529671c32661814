"""The Store API over DuckLM's memory: put, get, delete, search items; list namespaces.

Every item is one DuckLM memory (`store/mapping.py` says which scope, id and text), so
DuckLM's recall and memory search find what a LangGraph client put, and the Store API shows
what DuckLM's memory policy wrote. `ducklm/stores/agent_protocol/store_index.py` finds the
items put through the API by namespace prefix; DuckLM's own memories are found by their
scope. A superseded memory is not an item (DuckLM no longer recalls it either).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ducklm.config.settings import Settings
from ducklm.kit.workspaces import resolve_workspace
from ducklm.memory import MemoryRecord, MemoryStore, NewMemory
from ducklm.server.agent_protocol.store.filter import matches
from ducklm.server.agent_protocol.store.mapping import (
    META,
    BadNamespace,
    ItemView,
    Namespace,
    Placement,
    as_item,
    encode_label,
    fits,
    item_metadata,
    memory_id,
    placement,
    scope_namespace,
    scope_query,
    text_of,
    under,
)
from ducklm.stores.agent_protocol.store_index import StoreIndex

SCAN = 10_000
"""At most this many of DuckLM's own memories are read for one prefix, newest first."""


class NoMemory(RuntimeError):
    """DuckLM runs with memory off: there is no store behind the Store API."""


@dataclass(frozen=True)
class Found:
    """A search result: the item, and its score when the search had a query."""

    item: ItemView
    score: float | None = None


class StoreItems:
    """The Store API's operations on one `MemoryStore` and the door's index."""

    def __init__(self, memory: MemoryStore | None, index: StoreIndex, settings: Settings) -> None:
        self._memory = memory
        self._index = index
        self._settings = settings
        # Put and delete read, then write: one at a time, so two puts of a new key
        # cannot both insert its memory.
        self._write_lock = asyncio.Lock()

    @property
    def available(self) -> bool:
        """Whether DuckLM's memory is open (it is off in some settings)."""
        return self._memory is not None

    async def put(self, namespace: Namespace, key: str, value: dict[str, Any]) -> None:
        """Store `value` as item `key` of `namespace`, a new memory or a changed one.

        Raises:
            BadNamespace: A workspace namespace not written as its resolved path.
            WorkspaceError: A workspace the person did not allow.
            NoMemory: Memory is off.
        """
        memory = self._store()
        place = await self._placed(namespace)
        text, metadata = text_of(value), item_metadata(namespace, key, value)
        async with self._write_lock:
            held = await self._held(namespace, key)
            if held is not None and held.superseded_by is None:
                await memory.update(held.id, text=text, metadata=metadata)
                await self._index.put(namespace, key, held.id)
                return
            if held is not None:  # superseded: the item comes back as a new memory
                await memory.delete(held.id)
            new = NewMemory(
                text,
                place.scope,
                place.workspace,
                place.conversation_id,
                metadata=metadata,
                id=memory_id(namespace, key),
            )
            (record,) = await memory.add_many([new])
            await self._index.put(namespace, key, record.id)

    async def get(self, namespace: Namespace, key: str) -> ItemView | None:
        """Item `key` of `namespace`, or `None`."""
        held = await self._held(namespace, key)
        return as_item(held) if held is not None and held.superseded_by is None else None

    async def delete(self, namespace: Namespace, key: str) -> None:
        """Forget item `key` of `namespace` (its memory too); nothing when there is none."""
        memory = self._store()
        async with self._write_lock:
            held = await self._held(namespace, key)
            if held is not None:
                await memory.delete(held.id)
            await self._index.delete(namespace, key)

    async def search(
        self,
        prefix: Namespace,
        *,
        filter_: dict[str, Any] | None,
        query: str | None,
        limit: int,
        offset: int,
    ) -> list[Found]:
        """Items under `prefix` whose value matches `filter_`, a page of them.

        Without a query, newest change first; with one, by DuckLM's hybrid search (MiniLM
        and BM25), then the items neither retriever proposed.
        """
        items = [i for i in await self._under(prefix) if matches(i.value, filter_)]
        if not query:
            items.sort(key=lambda i: i.record.updated_at, reverse=True)
            return [Found(i) for i in items[offset : offset + limit]]
        by_id = {i.record.id: i for i in items}
        result = await self._store().search_among(query, by_id, k=offset + limit)
        ranked = [Found(by_id[h.record.id], h.score) for h in result.hits if h.record.id in by_id]
        seen = {f.item.record.id for f in ranked}
        ranked += [Found(i) for i in items if i.record.id not in seen]
        return ranked[offset : offset + limit]

    async def namespaces(
        self,
        *,
        prefix: Namespace,
        suffix: Namespace,
        max_depth: int | None,
        limit: int,
        offset: int,
    ) -> list[Namespace]:
        """The namespaces holding items, matching `prefix` and `suffix` (`*`: any label).

        Cut to `max_depth` labels, sorted, one page of them.
        """
        fixed = prefix[: prefix.index("*")] if "*" in prefix else prefix
        found = {i.namespace for i in await self._under(fixed)}
        kept = {
            ns[:max_depth] if max_depth is not None else ns
            for ns in found
            if fits(ns, prefix) and fits(ns, suffix, at_end=True)
        }
        return sorted(kept)[offset : offset + limit]

    async def _under(self, prefix: Namespace) -> list[ItemView]:
        """Every item in force whose namespace is `prefix` or inside it."""
        memory = self._store()
        rows = await self._index.under(prefix)
        records = await memory.get_many(r.memory_id for r in rows)
        items = [as_item(r) for r in records.values() if r.superseded_by is None]
        query = scope_query(prefix)
        if query is not None:
            theirs = await memory.list(
                scope=query.scope,
                workspace=query.workspace,
                conversation_id=query.conversation_id,
                limit=SCAN,
            )
            items += [as_item(r) for r in theirs if META not in r.metadata]
        return [i for i in items if under(i.namespace, prefix)]

    async def _held(self, namespace: Namespace, key: str) -> MemoryRecord | None:
        """The memory of item `key` (superseded or not): its own, or DuckLM's of that id."""
        own = memory_id(namespace, key)
        records = await self._store().get_many([own, key])
        if own in records:
            return records[own]
        theirs = records.get(key)
        if theirs is not None and META not in theirs.metadata:
            return theirs if scope_namespace(theirs) == namespace else None
        return None

    async def _placed(self, namespace: Namespace) -> Placement:
        """Where an item of `namespace` is stored, its workspace checked."""
        place = placement(namespace)
        if place.workspace is None:
            return place
        resolved = str(await resolve_workspace(self._settings, place.workspace))
        if resolved != place.workspace:
            raise BadNamespace(
                f"name the workspace by its resolved path: {encode_label(resolved)!r}"
            )
        return place

    def _store(self) -> MemoryStore:
        if self._memory is None:
            raise NoMemory("DuckLM has no memory store open")
        return self._memory
