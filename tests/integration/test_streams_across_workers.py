"""A run's live stream from any worker: two `ducklm serve` on one PostgreSQL.

Worker A runs a turn whose answer streams slowly; a client follows it on worker B
(`GET /v1/tasks/{id}/stream`), which gets A's events through PostgreSQL's
`LISTEN/NOTIFY` relay; a client that leaves mid-stream and comes back to the other
worker with `Last-Event-ID` gets the rest, nothing missed and nothing twice. One pair of
workers serves both cases (CI time).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from ducklm.config.settings import Settings
from tests.support.postgres import fresh_schema, require_postgres
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.workers import Worker, shared_settings_under, workers_in_turn

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

QUIET = {"critic": False, "memory": False}
ANSWER = " ".join(f"word{n}" for n in range(60))
Seen = tuple[str, dict[str, Any]]  # (SSE id, event)


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedLLM]:
    """The scripted model both workers ask."""
    with ScriptedLLM() as server:
        yield server


@pytest.fixture(scope="module")
def shared_settings(model: ScriptedLLM, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The settings the workers share: the model and one workspace."""
    root = tmp_path_factory.mktemp("streams-across-workers")
    return shared_settings_under(root, model.base_url)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pair(shared_settings: Settings) -> AsyncIterator[list[Worker]]:
    """Workers A and B on one fresh schema, started one after the other."""
    async with fresh_schema(require_postgres()) as url:
        folder = shared_settings.data_dir.parent
        async with workers_in_turn(shared_settings, url, folder, {"a": {}, "b": {}}) as started:
            yield started


async def _events(response: httpx.Response) -> AsyncIterator[Seen]:
    """(id, event) of an SSE response as they come."""
    ident = ""
    async for line in response.aiter_lines():
        if line.startswith("id:"):
            ident = line.removeprefix("id:").strip()
        elif line.startswith("data:"):
            yield ident, json.loads(line.removeprefix("data:").strip())


async def _start_slow_turn(a: Worker, model: ScriptedLLM, conversation: str) -> str:
    """A turn on A whose answer streams a word every 30 ms; its task id."""
    model.set_default(reply(ANSWER, chunk_delay_s=0.03))
    body = {"message": "tell me", "conversation_id": conversation, **QUIET}
    async with a.client.stream("POST", "/v1/chat/stream", json=body) as response:
        assert response.status_code == 200
        async for _, item in _events(response):
            return str(item["task_id"])  # the run goes on without this client
    raise AssertionError("the turn sent no event")


async def _follow(
    worker: Worker, task_id: str, *, last_id: str | None = None, stop_after: int | None = None
) -> list[Seen]:
    """The task's stream on `worker` (after `last_id`), to its end or `stop_after` tokens."""
    headers = {"Last-Event-ID": last_id} if last_id else {}
    seen: list[Seen] = []
    async with worker.client.stream(
        "GET", f"/v1/tasks/{task_id}/stream", headers=headers, timeout=60
    ) as response:
        assert response.status_code == 200
        async for ident, item in _events(response):
            seen.append((ident, item))
            tokens = sum(1 for _, e in seen if e["type"] == "token")
            if stop_after is not None and tokens >= stop_after:
                break
    return seen


def _audited(seen: list[Seen]) -> list[tuple[int, str]]:
    return [(e["seq"], e["type"]) for _, e in seen if "seq" in e]


async def test_a_run_on_one_worker_streams_live_on_the_other(
    pair: list[Worker], model: ScriptedLLM
) -> None:
    a, b = pair
    task_id = await _start_slow_turn(a, model, "live-elsewhere")
    on_a, on_b = await asyncio.gather(_follow(a, task_id), _follow(b, task_id))
    assert on_b[-1][1]["type"] == "done" and on_b[-1][1]["status"] == "completed"
    # Every audited event once, in order, as A sent it; the same ids on both workers.
    assert _audited(on_b) == _audited(on_a)
    assert [i for i, e in on_b if "seq" in e] == [i for i, e in on_a if "seq" in e]
    # B streamed the answer live: its tokens are A's last ones, ids and all, and were
    # most of the answer (B subscribed a moment after the run began).
    tokens_a = [(i, e["text"]) for i, e in on_a if e["type"] == "token"]
    tokens_b = [(i, e["text"]) for i, e in on_b if e["type"] == "token"]
    assert tokens_b and tokens_b == tokens_a[len(tokens_a) - len(tokens_b) :]
    assert len(tokens_b) > len(tokens_a) // 2
    ids = [i for i, _ in on_b]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("first, second", [(0, 1), (1, 0)], ids=["a-then-b", "b-then-a"])
async def test_a_client_that_reconnects_to_the_other_worker_gets_the_rest_once(
    pair: list[Worker], model: ScriptedLLM, first: int, second: int
) -> None:
    a = pair[0]
    task_id = await _start_slow_turn(a, model, f"reconnect-{first}")
    whole = asyncio.create_task(_follow(a, task_id))  # the reference: A's own stream
    before = await _follow(pair[first], task_id, stop_after=10)
    rest = await _follow(pair[second], task_id, last_id=before[-1][0])
    reference = await whole
    together = before + rest
    assert together[-1][1]["type"] == "done"
    ids = [i for i, _ in together]
    assert len(ids) == len(set(ids)), "an event came twice"
    assert _audited(together) == _audited(reference), "an audited event was missed"
    # Tokens: those after the cut are all there when the rest comes from the worker that
    # runs the task; from another worker, those sent after it subscribed.
    cut = [i for i, e in reference].index(before[-1][0])
    after_cut = [(i, e["text"]) for i, e in reference[cut + 1 :] if e["type"] == "token"]
    got = [(i, e["text"]) for i, e in rest if e["type"] == "token"]
    if pair[second] is a:
        assert got == after_cut
    else:
        assert got and got == after_cut[len(after_cut) - len(got) :]
