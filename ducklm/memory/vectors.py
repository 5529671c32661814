"""Memory vectors in Qdrant: embedded on disk by default, a Qdrant server when configured.

Why `qdrant_client.QdrantClient` and not `langchain_qdrant.QdrantVectorStore` on the hot
path, measured on 10k memories: the vector store takes only a sync client (its async
methods are executor wrappers), has no way to add precomputed vectors (batch encoding
needs that), and asks the server for the collection's config before every search (+2.4 ms
in embedded mode, a round trip with a server). The collection keeps its layout (an
unnamed cosine-compatible vector, `page_content` and `metadata` payload keys), so
`QdrantVectorStore(client, collection, embedding, distance=Distance.DOT)` reads DuckLM's
memories as LangChain documents (see `layout`).

Every call runs on a worker thread, one at a time: embedded Qdrant does numpy and
SQLite work inside its "async" client on the event loop, and is not thread-safe.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

from qdrant_client import QdrantClient, models
from threadpoolctl import ThreadpoolController

from ducklm.config.settings import Settings
from ducklm.memory.embeddings import Vectors
from ducklm.memory.layout import index_filter_fields, payload, qdrant_filter
from ducklm.memory.records import MemoryRecord
from ducklm.memory.scope import View
from ducklm.stores.private import make_private_dir

log = logging.getLogger(__name__)

T = TypeVar("T")
Accept = Callable[[str], bool]
SERVER_TIMEOUT_S = 10
# Embedded Qdrant searches by brute force and says so above this many points.
LOCAL_POINTS_LIMIT = 20_000


class VectorsUnavailable(RuntimeError):
    """Qdrant cannot be used right now; the message says why, for people."""


class QdrantLink:
    """One Qdrant client and the lock that serialises its calls, shared by collections.

    Embedded Qdrant allows one client per folder in a process, so the memories' and
    the episodes' collections go through the same client (and its one lock).
    """

    def __init__(self, client: QdrantClient | None, *, where: str, server: bool) -> None:
        self.client = client
        self.where = where
        self.server = server
        self.lock = asyncio.Lock()
        self.problem: str | None = None
        """Why the client could not be opened, if it could not."""


class VectorIndex:
    """One Qdrant collection holding a unit vector per memory, keyed by the memory's id."""

    def __init__(self, link: QdrantLink, collection: str) -> None:
        self._link = link
        self._collection = collection
        self._where = link.where
        self._server = link.server
        self._dim: int | None = None  # of the collection; None until known to exist
        self._checked = False

    @property
    def problem(self) -> str | None:
        """Why the client could not be opened, if it could not."""
        return self._link.problem

    def sibling(self, collection: str) -> VectorIndex:
        """An index of another collection on the same client."""
        return VectorIndex(self._link, collection)

    async def count(self) -> int | None:
        """Points in the collection; `None` when there is no collection yet."""
        points = await self._run(
            lambda c: c.count(self._collection, exact=True).count if self._exists(c) else None
        )
        if not self._server and (points or 0) > LOCAL_POINTS_LIMIT:
            log.warning(
                "%s memories in embedded Qdrant, which searches by brute force: "
                "beyond %s, a Qdrant server (DUCK_QDRANT_URL) answers faster",
                points,
                LOCAL_POINTS_LIMIT,
            )
        return points

    async def upsert(self, records: Sequence[MemoryRecord], vectors: Vectors) -> None:
        """Store (or replace) the vectors of `records`, creating the collection if needed."""

        def run(client: QdrantClient) -> None:
            self._ensure(client, int(vectors.shape[1]))
            points = [
                models.PointStruct(id=r.id, vector=v.tolist(), payload=payload(r))
                for r, v in zip(records, vectors, strict=True)
            ]
            client.upsert(self._collection, points=points, wait=True)

        if records:
            await self._run(run)

    async def set_payload(self, record: MemoryRecord) -> None:
        """Rewrite the payload of `record` (after a supersession)."""
        await self._run(
            lambda c: (
                c.overwrite_payload(self._collection, payload(record), points=[record.id])
                if self._exists(c)
                else None
            )
        )

    async def delete(self, ids: Sequence[str]) -> None:
        """Remove the points of `ids`; unknown ids are fine."""
        await self._run(
            lambda c: (
                c.delete(self._collection, points_selector=list(ids)) if self._exists(c) else None
            )
        )

    async def search(
        self, vector: Vectors, view: View, accept: Accept, limit: int
    ) -> list[tuple[str, float]]:
        """The `limit` nearest `(id, cosine)` that `view` sees and `accept` lets through.

        `accept` is the store's own view of SQLite, checked on every hit so a payload that
        missed an update (a failed write) cannot show a superseded or deleted memory.
        """
        if self._server:
            return await self._run(lambda c: self._search_server(c, vector, view, accept, limit))
        return await self._run(lambda c: self._search_local(c, vector, accept, limit))

    async def search_ids(
        self, vector: Vectors, ids: Collection[str], limit: int
    ) -> list[tuple[str, float]]:
        """The `limit` nearest `(id, cosine)` among the points `ids` only."""
        if self._server:
            only = models.Filter(must=[models.HasIdCondition(has_id=list(ids))])
            return await self._run(lambda c: self._query_server(c, vector, only, limit))
        return await self._run(lambda c: self._search_local(c, vector, ids.__contains__, limit))

    async def recreate(self) -> None:
        """Drop the collection; the next `upsert` creates it with its vectors' size."""

        def run(client: QdrantClient) -> None:
            if self._exists(client):
                client.delete_collection(self._collection)
            self._dim = None

        if self._link.client is None:
            await self._reopen()
        await self._run(run)

    async def close(self) -> None:
        """Close the client, for every sibling (embedded mode releases its folder lock)."""
        link = self._link
        async with link.lock:
            if link.client is not None:
                await asyncio.to_thread(link.client.close)
                link.client = None

    def _search_server(
        self, client: QdrantClient, vector: Vectors, view: View, accept: Accept, limit: int
    ) -> list[tuple[str, float]]:
        found = self._query_server(client, vector, qdrant_filter(view), limit)
        return [(i, score) for i, score in found if accept(i)]

    def _query_server(
        self, client: QdrantClient, vector: Vectors, where: models.Filter, limit: int
    ) -> list[tuple[str, float]]:
        if not self._exists(client):
            return []
        points = client.query_points(
            self._collection,
            query=vector.tolist(),
            query_filter=where,
            limit=limit,
            with_payload=False,
        ).points
        return [(str(p.id), p.score) for p in points]

    def _search_local(
        self, client: QdrantClient, vector: Vectors, accept: Accept, limit: int
    ) -> list[tuple[str, float]]:
        # Embedded Qdrant evaluates a payload filter in Python for every point (300 ms at
        # 10k). Its unfiltered search is numpy (2 ms), and filtering the unfiltered
        # ranking gives the same top hits as long as enough of them pass: widen until
        # `limit` pass or every point has been seen.
        if not self._exists(client):
            return []
        want = max(2 * limit, 32)
        while True:
            points = _local_search(client, self._collection, vector, want)
            hits = [(str(p.id), p.score) for p in points if accept(str(p.id))]
            if len(hits) >= limit or len(points) < want:
                return hits[:limit]
            want *= 8

    def _exists(self, client: QdrantClient) -> bool:
        if not self._checked:
            if client.collection_exists(self._collection):
                params = client.get_collection(self._collection).config.params.vectors
                self._dim = params.size if isinstance(params, models.VectorParams) else None
                if not self._server:  # a sibling collection was not relaxed at connect
                    _relax_local_durability(client, self._collection)
            self._checked = True
        return self._dim is not None

    def _ensure(self, client: QdrantClient, dim: int) -> None:
        if self._exists(client):
            if self._dim != dim:
                raise VectorsUnavailable(
                    f"the vector index holds {self._dim}-dimensional vectors but the "
                    f"embedding model gives {dim}: run a reindex"
                )
            return
        # DOT on unit vectors is the cosine; embedded Qdrant would renormalise every
        # stored vector on each COSINE search (5 ms at 10k points).
        config = models.VectorParams(size=dim, distance=models.Distance.DOT)
        client.create_collection(self._collection, vectors_config=config)
        if self._server:
            index_filter_fields(client, self._collection)
        else:
            _relax_local_durability(client, self._collection)
        self._dim = dim

    async def _run(self, call: Callable[[QdrantClient], T]) -> T:
        async with self._link.lock:
            client = self._link.client
            if client is None:
                raise VectorsUnavailable(self.problem or f"Qdrant at {self._where} is closed")
            try:
                return await asyncio.to_thread(call, client)
            except VectorsUnavailable:
                raise
            except Exception as exc:
                # Anything from Qdrant (connection refused, a broken or missing local file,
                # a server error) means the same to DuckLM: vectors are missing for now.
                self._checked = False
                raise VectorsUnavailable(
                    f"Qdrant at {self._where} failed: {exc_name(exc)}"
                ) from exc

    async def _reopen(self) -> None:
        link = self._link
        async with link.lock:
            link.client, link.problem = await asyncio.to_thread(
                _connect_client, self._where, server=self._server, collection=self._collection
            )
            self._checked = False


def exc_name(exc: BaseException) -> str:
    """A short, safe description of an exception: its type, not its text."""
    return type(exc).__name__


def _connect_client(
    where: str, *, server: bool, collection: str
) -> tuple[QdrantClient | None, str | None]:
    if server:
        # Makes no request. No version check either: with the server down it would stall
        # the start by the timeout; a mismatch shows up as an error on first use.
        client = QdrantClient(url=where, timeout=SERVER_TIMEOUT_S, check_compatibility=False)
        return client, None
    try:
        make_private_dir(Path(where))  # memories are the person's: owner-only like the rest
        client = QdrantClient(path=where, force_disable_check_same_thread=True)
    except Exception as exc:
        log.warning("embedded Qdrant at %s cannot open", where, exc_info=True)
        # Embedded Qdrant locks its folder; its message is the only way to tell this case.
        if "already accessed" in str(exc):
            return None, (
                f"another process uses the embedded Qdrant at {where}; several DuckLM "
                "processes on one data dir need a Qdrant server (DUCK_QDRANT_URL)"
            )
        return None, f"the embedded Qdrant at {where} cannot open ({exc_name(exc)})"
    _relax_local_durability(client, collection)
    return client, None


def _local_search(
    client: QdrantClient, collection: str, vector: Vectors, limit: int
) -> list[models.ScoredPoint]:
    # Through the public API embedded Qdrant turns the query into a float64 list, and
    # numpy then upcasts every stored float32 vector on each search: 2.3 ms at 10k
    # points, 23 ms at 100k. Its collection object takes the float32 array as it is
    # (0.2 ms at 10k). A private object: if it changes shape, the public call is used.
    local: Any = getattr(getattr(client, "_client", None), "collections", {}).get(collection)
    try:
        # OpenBLAS threads busy-wait for a while after each product; on a small machine
        # they take the CPU from the next query's encoding (12 ms becomes 28 ms on two
        # cores). One thread is enough at 10k points (0.2 ms); at 100k the product takes
        # 7 ms longer, and a query still costs 30 ms instead of 40.
        with _blas().limit(limits=1, user_api="blas"):
            hits: list[models.ScoredPoint] = local.search(
                query_vector=vector, limit=limit, with_payload=False
            )
    except (AttributeError, TypeError):
        return client.query_points(
            collection, query=vector.tolist(), limit=limit, with_payload=False
        ).points
    return hits


@functools.cache
def _blas() -> ThreadpoolController:
    """The BLAS thread pools numpy uses (found once: it scans the loaded libraries)."""
    return ThreadpoolController()


def _relax_local_durability(client: QdrantClient, collection: str) -> None:
    # Embedded Qdrant commits (and fsyncs) every point on its own: 1 ms each, which
    # caps ingest near 1000/s. The vectors are derived data that a reindex rebuilds from
    # SQLite, so WAL without a sync per commit is enough (3x faster). This reaches into
    # qdrant-client's private objects; if they change shape, it quietly does nothing.
    collections = getattr(getattr(client, "_client", None), "collections", {})
    storage = getattr(getattr(collections.get(collection), "storage", None), "storage", None)
    if isinstance(storage, sqlite3.Connection):
        with suppress(sqlite3.Error):
            storage.execute("PRAGMA journal_mode=WAL")
            storage.execute("PRAGMA synchronous=NORMAL")


@asynccontextmanager
async def open_vectors(settings: Settings, collection: str) -> AsyncIterator[VectorIndex]:
    """The vector index `settings` ask for; a Qdrant that cannot open is reported, not raised.

    Embedded mode locks its folder: a second process on the same data dir gets a
    `problem` (and keyword search) instead of an error; several processes need a server.
    """
    server = settings.qdrant_url is not None
    where = settings.qdrant_url or str(settings.files.qdrant)
    client, problem = await asyncio.to_thread(
        _connect_client, where, server=server, collection=collection
    )
    link = QdrantLink(client, where=where, server=server)
    link.problem = problem
    index = VectorIndex(link, collection)
    try:
        yield index
    finally:
        await index.close()
