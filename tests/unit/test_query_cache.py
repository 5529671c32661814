"""The query cache: one encode for a text asked twice at once, batches untouched."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import pytest

from ducklm.memory.embeddings import QueryCache, Vectors


class Counting:
    """An embedder that counts its calls and can be told to fail."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.fail = False

    async def embed(self, texts: Sequence[str], *, background: bool = False) -> Vectors:
        self.calls.append(list(texts))
        await asyncio.sleep(0.01)  # long enough for a second caller to arrive
        if self.fail:
            raise RuntimeError("model down")
        return np.full((len(texts), 3), float(len(self.calls)), dtype=np.float32)


async def test_one_encode_for_a_text_asked_twice_at_once() -> None:
    inner = Counting()
    cache = QueryCache(inner)
    first, second = await asyncio.gather(cache.embed(["hello"]), cache.embed(["hello"]))
    assert inner.calls == [["hello"]]
    assert first is second
    assert not first.flags.writeable  # shared: nobody may change it
    assert (await cache.embed(["hello"])) is first
    assert len(inner.calls) == 1


async def test_batches_pass_through_and_the_oldest_text_is_forgotten() -> None:
    inner = Counting()
    cache = QueryCache(inner, size=2)
    await cache.embed(["a", "b"])
    await cache.embed(["a", "b"])
    assert len(inner.calls) == 2
    for text in ("a", "b", "c", "a"):
        await cache.embed([text])
    assert inner.calls[2:] == [["a"], ["b"], ["c"], ["a"]]


async def test_a_failure_reaches_every_waiter_and_is_not_kept() -> None:
    inner = Counting()
    inner.fail = True
    cache = QueryCache(inner)
    results = await asyncio.gather(cache.embed(["x"]), cache.embed(["x"]), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)
    inner.fail = False
    assert (await cache.embed(["x"])).shape == (1, 3)
    assert len(inner.calls) == 2


async def test_cancelling_one_waiter_leaves_the_other_its_answer() -> None:
    inner = Counting()
    cache = QueryCache(inner)
    first = asyncio.create_task(cache.embed(["q"]))
    await asyncio.sleep(0)
    second = asyncio.create_task(cache.embed(["q"]))
    await asyncio.sleep(0)
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    assert (await first).shape == (1, 3)
