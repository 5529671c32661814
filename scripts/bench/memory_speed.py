"""The memory benchmark's speed half: ingest A/B, search latency, the 100k index.

Timings on a small shared machine mean little without the load, so every block notes
the CPU share other processes took meanwhile (`Others`), and the ingest variants run
interleaved in one run (`ingest_ab`).
"""

from __future__ import annotations

import asyncio
import os
import resource
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from _common import median_ms, p90_ms
from memory_data import CONVERSATION, WORKSPACE, Data, Question

import ducklm.memory.pipeline as pipeline_module
from ducklm.config.settings import Settings
from ducklm.memory import MemoryStore, NewMemory, open_memory
from ducklm.memory.embeddings import Vectors, open_embedder
from ducklm.memory.layout import collection_name
from ducklm.memory.table import MemoryTable
from ducklm.memory.vectors import open_vectors
from ducklm.stores import open_database

FILLER = 10_000
BIG = 100_000
INGEST_BUDGET_S = 60
"""Past this, the 100k index is filled with random vectors (the speed part stays short)."""
AB_ROUNDS = 4
AB_SIZE = 300
ENCODER = "encoder alone (one batch call)"
SEQUENTIAL = "add_many sequential (before)"
PIPELINED = "add_many pipelined (now)"
IDLE = "search, model thread idle"
BESIDE = "search beside add_many"
BESIDE_ROUNDS = 20
BESIDE_SIZE = 256
BESIDE_AFTER_S = 0.05


SERVER_NOTE = """\
When to switch to a Qdrant server (DUCK_QDRANT_URL): embedded Qdrant compares the query
with every vector, keeps every point in memory and reads them all when it opens (see the
100k row). Past ~20k memories (where Qdrant itself warns), once opening takes seconds, or
as soon as two processes share a data dir (the first locks the embedded folder), use a
server: its HNSW and payload indexes keep search at a few ms at any size. Records, BM25
and fusion stay the same.
"""


class RandomEmbedder:
    """Random unit vectors: only for filling the 100k index when real encoding is too slow."""

    def __init__(self) -> None:
        self._rng = np.random.default_rng(0)

    async def embed(self, texts: Sequence[str], *, background: bool = False) -> Vectors:
        rows = self._rng.standard_normal((len(texts), 384)).astype(np.float32)
        unit: Vectors = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        return unit


async def search_times(store: MemoryStore, questions: list[Question], passes: int) -> list[float]:
    for q in questions[:5]:  # warm-up: first calls pay for lazy imports and caches
        await store.search(q.text, workspace=WORKSPACE, conversation_id=CONVERSATION)
    times = []
    for _ in range(passes):
        for q in questions:
            start = time.perf_counter()
            await store.search(q.text, workspace=WORKSPACE, conversation_id=CONVERSATION)
            times.append(time.perf_counter() - start)
    return times


async def cached_search_times(store: MemoryStore, questions: list[Question]) -> list[float]:
    """Each question searched twice in a row, the second timed: its vector comes from the
    query cache, so this is the store's own part (BM25, Qdrant, fusion, records) alone."""
    times = []
    for q in questions:
        await store.search(q.text, workspace=WORKSPACE, conversation_id=CONVERSATION)
        start = time.perf_counter()
        await store.search(q.text, workspace=WORKSPACE, conversation_id=CONVERSATION)
        times.append(time.perf_counter() - start)
    return times


class Others:
    """Share of the machine's CPU that other processes used while the block ran, and the load.

    Timings on a small shared machine mean little without them (Linux /proc/stat; 0
    elsewhere). The load average (1 minute, `os.getloadavg`) counts this process too.
    """

    def __enter__(self) -> Others:
        self._start = (_machine_cpu(), _own_cpu())
        self.share = 0.0
        self.loads = (os.getloadavg()[0], 0.0)
        return self

    def __str__(self) -> str:
        """`others 12%, load 1.2-2.3`: the block's CPU share of others, load before-after."""
        return f"others {self.share:.0%}, load {self.loads[0]:.1f}-{self.loads[1]:.1f}"

    def __exit__(self, *exc: object) -> None:
        (busy0, idle0), own0 = self._start
        (busy1, idle1), own1 = _machine_cpu(), _own_cpu()
        total = (busy1 - busy0) + (idle1 - idle0)
        others = (busy1 - busy0) - (own1 - own0)
        self.share = max(others, 0.0) / total if total > 0 else 0.0
        self.loads = (self.loads[0], os.getloadavg()[0])


def _machine_cpu() -> tuple[float, float]:
    """Busy and idle CPU seconds of the whole machine so far."""
    try:
        first = Path("/proc/stat").read_text().split("\n")[0]
    except OSError:
        return 0.0, 0.0
    ticks = [float(v) for v in first.split()[1:9]]
    idle = ticks[3] + ticks[4]
    per_second = os.sysconf("SC_CLK_TCK")
    return (sum(ticks) - idle) / per_second, idle / per_second


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def encoding_ahead(depth: int) -> Iterator[None]:
    """The store's write path with `depth` batches encoded ahead (0: the sequential path)."""
    saved = pipeline_module.ENCODE_AHEAD
    pipeline_module.ENCODE_AHEAD = depth
    try:
        yield
    finally:
        pipeline_module.ENCODE_AHEAD = saved


async def ingest_ab(store: MemoryStore, data: Data, encode: object) -> dict[str, list[float]]:
    """Memories per second: the encoder alone, the sequential path, the pipelined one (ABBA)."""
    rates: dict[str, list[float]] = {}
    items = data.filler.make(AB_SIZE * 2 * AB_ROUNDS, seed=9)
    for n in range(AB_ROUNDS):
        chunk = items[n * 2 * AB_SIZE : (n + 1) * 2 * AB_SIZE]
        start = time.perf_counter()
        await asyncio.to_thread(encode, [i.text for i in chunk[:AB_SIZE]])  # type: ignore[operator]
        rates.setdefault(ENCODER, []).append(AB_SIZE / (time.perf_counter() - start))
        variants = [(SEQUENTIAL, 0, chunk[:AB_SIZE]), (PIPELINED, 1, chunk[AB_SIZE:])]
        for label, depth, part in variants if n % 2 == 0 else variants[::-1]:
            with encoding_ahead(depth):
                start = time.perf_counter()
                await store.add_many(part)
                rates.setdefault(label, []).append(AB_SIZE / (time.perf_counter() - start))
    return rates


async def beside_ingest(store: MemoryStore, data: Data) -> dict[str, list[float]]:
    """A search alone, and the same kind of search while `add_many` writes (alternating).

    Each round asks a question not asked before (no cached query vector), first with the
    model thread idle, then BESIDE_SIZE memories into an ingest of the same store.
    """
    times: dict[str, list[float]] = {IDLE: [], BESIDE: []}
    for n, q in enumerate(data.questions[:BESIDE_ROUNDS]):
        times[IDLE].append(await _timed_search(store, f"{q.text} ({n}, alone)"))
        items = data.filler.make(BESIDE_SIZE, seed=100 + n)
        ingest = asyncio.ensure_future(store.add_many(items))
        await asyncio.sleep(BESIDE_AFTER_S)  # the ingest is encoding by now
        times[BESIDE].append(await _timed_search(store, f"{q.text} ({n}, beside)"))
        await ingest
    return times


async def _timed_search(store: MemoryStore, text: str) -> float:
    start = time.perf_counter()
    await store.search(text, workspace=WORKSPACE, conversation_id=CONVERSATION)
    return time.perf_counter() - start


async def grow(settings: Settings, items: list[NewMemory], *, random_vectors: bool) -> float:
    """Add `items`; returns seconds. Random vectors stand in for encoding when told to."""
    collection = collection_name(settings.embeddings_model)
    async with (
        open_database(settings.files.database) as db,
        open_embedder(settings) as embedder,
        open_vectors(settings, collection) as vectors,
    ):
        store = MemoryStore(
            MemoryTable(db), RandomEmbedder() if random_vectors else embedder, vectors
        )
        await store.load()
        start = time.perf_counter()
        await store.add_many(items)
        return time.perf_counter() - start


async def big_world(settings: Settings, data: Data, rate: float) -> list[object]:
    """Grow the index to BIG, reopen it, and time searches there."""
    extra = data.filler.make(BIG, seed=2)[: BIG - FILLER - len(data.facts)]
    random_vectors = len(extra) / rate > INGEST_BUDGET_S
    with Others() as during_ingest:
        seconds = await grow(settings, extra, random_vectors=random_vectors)
    start = time.perf_counter()
    async with open_database(settings.files.database) as db, open_memory(settings, db) as store:
        opened = time.perf_counter() - start
        with Others() as during_search:
            times = await search_times(store, data.questions, 1)
    how = "random vectors (encoding too slow)" if random_vectors else "real encoding"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return [
        how, len(extra) / seconds, opened, median_ms(times), p90_ms(times), rss,
        f"{during_ingest} / {during_search}",
    ]  # fmt: skip
