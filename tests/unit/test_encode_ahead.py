"""`encode_ahead`: the next batch encodes while one is written, in order, errors kept apart.

The steps are plain coroutines that note when they start and end; an encode ends only
when the test lets it (an `asyncio.Event` per batch), so what overlaps is decided by the
pipeline alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from ducklm.memory import pipeline
from ducklm.memory.embeddings import EmbeddingError, Vectors
from ducklm.memory.pipeline import encode_ahead
from ducklm.memory.vectors import VectorsUnavailable


class Steps:
    """Stage, encode and write steps that log what happens, in order."""

    def __init__(self, failing: dict[int, Exception] | None = None) -> None:
        self.log: list[str] = []
        self.failing = failing or {}
        self.cancelled: list[int] = []

    async def stage(self, batch: int) -> None:
        self.log.append(f"stage {batch}")

    async def encode(self, batch: int) -> Vectors:
        self.log.append(f"encode {batch}")
        try:
            await asyncio.sleep(0.02 * (batch + 1))  # later batches take longer
        except asyncio.CancelledError:
            self.cancelled.append(batch)
            raise
        if batch in self.failing:
            raise self.failing[batch]
        self.log.append(f"encoded {batch}")
        return np.full((1, 2), batch, dtype=np.float32)

    async def write(self, batch: int, vectors: Vectors) -> None:
        assert int(vectors[0, 0]) == batch  # each batch gets its own vectors
        self.log.append(f"write {batch}")
        await asyncio.sleep(0)
        self.log.append(f"written {batch}")


@contextmanager
def ahead(depth: int) -> Iterator[None]:
    saved = pipeline.ENCODE_AHEAD
    pipeline.ENCODE_AHEAD = depth
    try:
        yield
    finally:
        pipeline.ENCODE_AHEAD = saved


async def test_the_next_batch_encodes_before_this_one_is_written() -> None:
    steps = Steps()
    with ahead(1):
        await encode_ahead([0, 1, 2], stage=steps.stage, encode=steps.encode, write=steps.write)
    log = steps.log
    assert [e for e in log if e.startswith("written")] == ["written 0", "written 1", "written 2"]
    # batch 1's encode was queued before batch 0's vectors were written
    assert log.index("encode 1") < log.index("write 0")
    # and a batch is staged (SQLite) before its vectors are written (Qdrant)
    for n in range(3):
        assert log.index(f"stage {n}") < log.index(f"write {n}")


async def test_depth_zero_is_the_sequential_path() -> None:
    steps = Steps()
    with ahead(0):
        await encode_ahead([0, 1], stage=steps.stage, encode=steps.encode, write=steps.write)
    assert steps.log == [
        "stage 0", "encode 0", "encoded 0", "write 0", "written 0",
        "stage 1", "encode 1", "encoded 1", "write 1", "written 1",
    ]  # fmt: skip


async def test_a_failed_batch_is_reported_and_the_rest_are_written() -> None:
    steps = Steps({1: EmbeddingError("the model is gone")})
    failures: list[Exception] = []
    await encode_ahead(
        [0, 1, 2], stage=steps.stage, encode=steps.encode, write=steps.write,
        failed=failures.append,
    )  # fmt: skip
    assert [str(f) for f in failures] == ["the model is gone"]
    assert "written 0" in steps.log and "written 2" in steps.log
    assert "write 1" not in steps.log


async def test_without_failed_the_error_is_raised_and_queued_encodes_are_cancelled() -> None:
    steps = Steps()

    async def broken(batch: int, vectors: Vectors) -> None:
        raise VectorsUnavailable("Qdrant is down")

    with ahead(1), pytest.raises(VectorsUnavailable, match="Qdrant is down"):
        await encode_ahead([0, 1, 2], stage=steps.stage, encode=steps.encode, write=broken)
    assert steps.cancelled == [1]  # queued ahead, never needed
    assert "encode 2" not in steps.log


async def test_other_errors_are_never_swallowed() -> None:
    steps = Steps({0: ValueError("a bug")})
    with pytest.raises(ValueError, match="a bug"):
        await encode_ahead(
            [0, 1], stage=steps.stage, encode=steps.encode, write=steps.write,
            failed=lambda exc: None,
        )  # fmt: skip
