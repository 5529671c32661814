"""A burst of tokens: the first reaches the run's followers before the next is emitted.

The chain is the server's own: a node emits into the run's channel, the runner's driver
publishes to the task (`LiveTask`), and a client follows the task. The node emits in a
tight loop, as it does when a model server's chunks arrived together.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any, cast

from langgraph.runtime import Runtime

from ducklm.kit.events import TokenSender
from ducklm.runtime.channel import RunChannel
from ducklm.server.tasks import LiveTask

BURST = 50


async def _nothing() -> AsyncIterator[Any]:
    return
    yield  # an async generator with no items: the graph's stream of a node-only test


async def _burst() -> list[tuple[int, str]]:
    """(tokens emitted so far, token) for each token as a follower of the task saw it."""
    channel = RunChannel()
    live = LiveTask("task", "thread")
    runtime = cast(Runtime[Any], SimpleNamespace(context=SimpleNamespace(events=channel.put)))
    emitted = 0

    async def node() -> None:
        nonlocal emitted
        tokens = TokenSender(runtime)
        for n in range(BURST):
            emitted += 1
            await tokens.send(f"t{n}")
        await channel.pump(_nothing())  # the graph's end

    async def driver() -> None:
        async for item in channel.items():
            live.publish(cast(dict[str, Any], item))
        live.finish()

    async def follower() -> list[tuple[int, str]]:
        return [(emitted, item["text"]) async for _, item in live.follow()]

    seen = asyncio.create_task(follower())
    await asyncio.gather(node(), driver())
    return await seen


async def test_the_first_token_is_followed_before_the_next_is_emitted() -> None:
    seen = await _burst()
    assert seen[0] == (1, "t0")
    # The rest went out together once the node paused (a model server's next chunk).
    assert [text for _, text in seen] == [f"t{n}" for n in range(BURST)]
    assert {count for count, _ in seen[1:]} == {BURST}
