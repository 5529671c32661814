"""Writing in batches with the encoder kept busy: batch n+1 encodes while batch n is written.

A batch's write is three steps: its records into SQLite (one transaction) and the
keyword index, its texts through the embedding model, its vectors into Qdrant (one
upsert). One after the other, the encoder sits idle during every SQLite and Qdrant
write, and they sit idle during every encode. Here the next batch's encode is already
queued on the background model thread when a batch's
vectors are written, so the encoder, the slowest step, never waits for the others.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from ducklm.memory.embeddings import EmbeddingError, Vectors
from ducklm.memory.vectors import VectorsUnavailable

B = TypeVar("B")

ENCODE_AHEAD = 0
"""Batches whose encode is queued beyond the one being written; 0 is the sequential path
(stage, encode, write, then the next batch). `scripts/bench/memory_speed.py` measures
both in the same run. On this project's 2-core machine the encoder already takes both
cores, so writing beside it only competed: 4 interleaved rounds (2026-12-03, others
took 47% of the CPU) read 73/78/63/48 memories/s encoding one ahead against 99/83/63/62
sequential (0.85x). Set 1 where more cores are free; more than 1 gains nothing, since
the background thread runs one job at a time and every queued batch is memory held."""
TOLERATED = (EmbeddingError, VectorsUnavailable)
"""A batch that fails with one of these can be left without vectors (a reindex repairs it)."""


async def encode_ahead(
    batches: Sequence[B],
    *,
    stage: Callable[[B], Awaitable[None]],
    encode: Callable[[B], Awaitable[Vectors]],
    write: Callable[[B, Vectors], Awaitable[None]],
    failed: Callable[[Exception], None] | None = None,
) -> None:
    """For each batch in order: `stage` it, then `write` its vectors; encodes run ahead.

    Args:
        batches: What to write, in order.
        stage: What comes before a batch's vectors (SQLite, keywords); may overlap the
            encode of the same batch and of the next.
        encode: The batch's vectors (on the background model thread).
        write: Store the vectors (Qdrant); overlaps the next batch's encode.
        failed: Called when a batch's encode or write raised one of `TOLERATED`, and the
            next batch goes on; without it, the error is raised.
    """
    queued: deque[asyncio.Future[Vectors]] = deque()
    try:
        for n, batch in enumerate(batches):
            await stage(batch)
            while len(queued) <= ENCODE_AHEAD and n + len(queued) < len(batches):
                queued.append(asyncio.ensure_future(encode(batches[n + len(queued)])))
            job = queued.popleft()
            try:
                await write(batch, await job)
            except TOLERATED as exc:
                if failed is None:
                    raise
                failed(exc)
    finally:
        for job in queued:
            job.cancel()  # after an error or a cancel: their chunks not started are skipped
        await asyncio.gather(*queued, return_exceptions=True)
