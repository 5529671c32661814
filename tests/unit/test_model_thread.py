"""The model threads: queries on one, background encodes on another, never waiting for them.

The scheduling tests hold the background thread on a gate job; the embedder tests run
the real MiniLM, both lanes at once.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable

import numpy as np
import pytest

from ducklm.memory.embeddings import (
    BACKGROUND_BATCH,
    BACKGROUND_CHUNK_CHARS,
    LocalEmbedder,
    QueryCache,
    background_chunks,
)
from ducklm.memory.model_thread import ModelThread, Priority

MODEL = "all-MiniLM-L6-v2"
# Long enough that a background batch of them takes many chunks.
BACKLOG = [
    f"note {n}: the heron came back to the mill pond on day {n} of the thaw" for n in range(256)
]


class Gate:
    """A job that holds the model thread until `open` (a SimpleQueue: no lock on the loop)."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[None] = queue.SimpleQueue()

    def __call__(self) -> str:
        self._queue.get()
        return "gate"

    def open(self) -> None:
        self._queue.put(None)


def recorder(ran: list[str], name: str) -> Callable[[], str]:
    def work() -> str:
        ran.append(name)
        return name

    return work


async def test_a_query_runs_while_a_background_job_holds_its_thread() -> None:
    thread, gate, ran = ModelThread(), Gate(), []
    held = thread.submit(Priority.BACKGROUND, gate)
    queued = [thread.submit(Priority.BACKGROUND, recorder(ran, f"b{n}")) for n in (1, 2)]
    query = thread.submit(Priority.QUERY, recorder(ran, "q"))
    assert await asyncio.wrap_future(query) == "q"  # the gate is still shut
    assert ran == ["q"] and not held.done()
    gate.open()
    assert [await asyncio.wrap_future(job) for job in (held, *queued)] == ["gate", "b1", "b2"]
    assert ran == ["q", "b1", "b2"]  # background jobs in the order given


async def test_a_cancelled_job_is_skipped_and_the_thread_goes_on() -> None:
    thread, gate, ran = ModelThread(), Gate(), []
    held = thread.submit(Priority.BACKGROUND, gate)
    dropped = thread.submit(Priority.BACKGROUND, recorder(ran, "dropped"))

    async def wait() -> str:
        return await asyncio.wrap_future(dropped)

    waiter = asyncio.create_task(wait())
    await asyncio.sleep(0)
    waiter.cancel()  # the awaiting coroutine gives up: its job must not run, nor block
    with pytest.raises(asyncio.CancelledError):
        await waiter
    later = thread.submit(Priority.BACKGROUND, recorder(ran, "later"))
    gate.open()
    assert await asyncio.wrap_future(later) == "later"
    assert await asyncio.wrap_future(held) == "gate"
    assert dropped.cancelled() and ran == ["later"]


async def test_a_failing_job_hands_its_error_to_its_caller_only() -> None:
    thread = ModelThread()

    def broken() -> str:
        raise ValueError("bad input")

    failed = thread.submit(Priority.QUERY, broken)
    with pytest.raises(ValueError, match="bad input"):
        await asyncio.wrap_future(failed)
    assert await asyncio.wrap_future(thread.submit(Priority.QUERY, lambda: "fine")) == "fine"


async def test_each_lane_is_one_thread_of_its_own() -> None:
    thread = ModelThread()
    names = {
        p: {
            await asyncio.wrap_future(thread.submit(p, lambda: threading.current_thread().name))
            for _ in range(3)
        }
        for p in Priority
    }
    assert all(len(found) == 1 for found in names.values())
    assert names[Priority.QUERY] != names[Priority.BACKGROUND]


def test_background_chunks_keep_the_order_and_stay_small() -> None:
    half = "h" * (BACKGROUND_CHUNK_CHARS // 2)
    long = "x" * (BACKGROUND_CHUNK_CHARS + 1)
    texts = [half, half, half, long, "d"]
    assert background_chunks(texts) == [[half, half], [half], [long], ["d"]]
    short = ["s"] * (BACKGROUND_BATCH + 1)
    assert background_chunks(short) == [["s"] * BACKGROUND_BATCH, ["s"]]
    assert len(background_chunks(BACKLOG)) == 4  # the batch below takes several jobs


@pytest.fixture
async def embedder() -> LocalEmbedder:
    local = LocalEmbedder(MODEL)
    await local.embed(["warm up"])  # the first encode loads the model (seconds)
    return local


async def test_a_query_finishes_before_a_long_background_batch(embedder: LocalEmbedder) -> None:
    backlog = asyncio.create_task(embedder.embed(BACKLOG, background=True))
    await asyncio.sleep(0)  # the batch is on the model thread's queue, in chunks
    query = asyncio.create_task(embedder.embed(["where is the heron?"]))
    done, _ = await asyncio.wait({backlog, query}, return_when=asyncio.FIRST_COMPLETED)
    assert done == {query}
    # Chunked, the batch still gives one row per text, in order, as a single batch would.
    chunked, whole = await backlog, await embedder.embed(BACKLOG)
    assert chunked.shape == (len(BACKLOG), 384)
    assert (chunked * whole).sum(axis=1).min() > 0.999
    # Encoded beside the batch (two threads, one tokenizer), the query's vector is its own.
    alone = await embedder.embed(["where is the heron?"], background=True)
    assert float((await query)[0] @ alone[0]) > 0.999


async def test_a_cancelled_background_batch_leaves_the_model_free(embedder: LocalEmbedder) -> None:
    backlog = asyncio.create_task(embedder.embed(BACKLOG, background=True))
    await asyncio.sleep(0)
    backlog.cancel()
    with pytest.raises(asyncio.CancelledError):
        await backlog
    rows = await embedder.embed(["the thread is not stuck"])
    assert rows.shape == (1, 384)
    assert (await embedder.embed(BACKLOG[:3], background=True)).shape == (3, 384)


async def test_the_query_cache_keeps_queries_and_passes_background_work(
    embedder: LocalEmbedder,
) -> None:
    cache = QueryCache(embedder)
    indexed = await cache.embed(["an indexed sentence"], background=True)
    asked = await cache.embed(["an indexed sentence"])
    assert asked is not indexed and indexed.flags.writeable  # not cached, not shared
    assert np.allclose(asked, indexed, atol=1e-2)
    assert (await cache.embed(["an indexed sentence"])) is asked
