"""An Agent Protocol run joined, streamed and cancelled through another worker.

Two `ducklm serve` workers on one PostgreSQL: a background run starts on worker A
(`POST /threads/{t}/runs`) and the scripted model streams its answer slowly; worker B
answers `join` once the run has ended, streams it live with the official
`langgraph-sdk` (the door's chunks relayed from A and journaled in PostgreSQL), gives a
client that reconnects to it with `Last-Event-ID` the rest once, waits for a run
enqueued on A to start, and cancels a run A runs. One pair of workers serves every case
(CI time).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import pytest_asyncio
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from ducklm.config.settings import Settings
from tests.support.agent_runs import QUIET, collect, prompt
from tests.support.postgres import fresh_schema, require_postgres
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.workers import TOKEN, Worker, shared_settings_under, workers_in_turn

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

ANSWER = " ".join(f"word{n}" for n in range(50))
LONG = " ".join(f"w{n}" + "x" * 180 for n in range(50))
"""An answer whose `values` are over a notice's 8000 bytes: read from the journal."""
MODES = ["values", "messages-tuple"]
Seen = tuple[str, str, Any]  # (SSE id, event, data)


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedLLM]:
    """The scripted model both workers ask."""
    with ScriptedLLM() as server:
        yield server


@pytest.fixture(scope="module")
def shared_settings(model: ScriptedLLM, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The settings the workers share: the model and one workspace."""
    root = tmp_path_factory.mktemp("ap-runs-across-workers")
    return shared_settings_under(root, model.base_url)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pair(shared_settings: Settings) -> AsyncIterator[list[Worker]]:
    """Workers A and B on one fresh schema, started one after the other."""
    async with fresh_schema(require_postgres()) as url:
        folder = shared_settings.data_dir.parent
        async with workers_in_turn(shared_settings, url, folder, {"a": {}, "b": {}}) as started:
            yield started


@asynccontextmanager
async def _sdk(worker: Worker) -> AsyncIterator[LangGraphClient]:
    """The langgraph-sdk client of one worker."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    url = str(worker.client.base_url)
    client = await asyncio.to_thread(get_client, url=url, api_key=None, headers=headers)
    async with client:
        yield client


async def _slow_run(
    a: Worker, model: ScriptedLLM, answer: str = ANSWER, **extra: Any
) -> tuple[str, str]:
    """A background run on A whose answer streams a word every 30 ms: (thread, run)."""
    model.set_default(reply(answer, chunk_delay_s=0.03))
    thread = (await a.client.post("/threads", json={})).json()["thread_id"]
    body = {"assistant_id": "ducklm", "input": prompt(), "context": QUIET, **extra}
    body.setdefault("stream_mode", MODES)
    created = await a.client.post(f"/threads/{thread}/runs", json=body)
    assert created.status_code == 200, created.text
    return thread, created.json()["run_id"]


async def _status(worker: Worker, thread: str, run: str) -> str:
    return str((await worker.client.get(f"/threads/{thread}/runs/{run}")).json()["status"])


async def _started(worker: Worker, thread: str, run: str) -> None:
    async with asyncio.timeout(30):
        while await _status(worker, thread, run) == "pending":  # noqa: ASYNC110  over HTTP
            await asyncio.sleep(0.05)


def _last_text(values: dict[str, Any]) -> str:
    return str(values["messages"][-1]["content"])


async def test_a_join_on_the_other_worker_waits_for_the_end(
    pair: list[Worker], model: ScriptedLLM
) -> None:
    a, b = pair
    thread, run = await _slow_run(a, model)
    await _started(a, thread, run)
    joined = await b.client.get(f"/threads/{thread}/runs/{run}/join", timeout=60)
    # Asked on A the moment B answered: the run had ended (B did not answer early).
    assert await _status(a, thread, run) == "success"
    assert _last_text(json.loads(joined.text)) == ANSWER


async def test_the_sdk_streams_a_run_of_the_other_worker_live(
    pair: list[Worker], model: ScriptedLLM
) -> None:
    a, b = pair
    thread, run = await _slow_run(a, model, LONG)
    await _started(a, thread, run)
    async with _sdk(a) as on_a, _sdk(b) as on_b:
        parts_a, parts_b = await asyncio.gather(
            collect(on_a.runs.join_stream(thread, run)),
            collect(on_b.runs.join_stream(thread, run)),
        )
    values = [p.data for p in parts_b if p.event == "values"]
    tokens = [p for p in parts_b if p.event == "messages"]
    assert values and _last_text(values[-1]) == LONG
    assert len(json.dumps(values[-1])) > 8000  # too large for a notice: read from the journal
    assert len(tokens) > 10, "B streamed the answer's tokens live"
    # The same events under the same ids on both workers, from B's first one on.
    seen_a = [(p.id, p.event, p.data) for p in parts_a]
    seen_b = [(p.id, p.event, p.data) for p in parts_b]
    assert seen_b == seen_a[len(seen_a) - len(seen_b) :]


async def _follow(
    worker: Worker, thread: str, run: str, last_id: str, stop_after: int | None = None
) -> list[Seen]:
    """The run's stream on `worker` after `last_id`, to its end or `stop_after` tokens."""
    seen: list[Seen] = []
    path = f"/threads/{thread}/runs/{run}/stream"
    headers = {"Last-Event-ID": last_id}
    async with worker.client.stream("GET", path, headers=headers, timeout=60) as response:
        assert response.status_code == 200
        ident = event = ""
        async for line in response.aiter_lines():
            if line.startswith("id:"):
                ident = line.removeprefix("id:").strip()
            elif line.startswith("event:"):
                event = line.removeprefix("event:").strip()
            elif line.startswith("data:"):
                seen.append((ident, event, json.loads(line.removeprefix("data:"))))
                tokens = sum(e == "messages" for _, e, _ in seen)
                if stop_after is not None and tokens >= stop_after:
                    break
    return seen


@pytest.mark.parametrize("first, second", [(0, 1), (1, 0)], ids=["a-then-b", "b-then-a"])
async def test_a_client_that_reconnects_to_the_other_worker_gets_the_rest_once(
    pair: list[Worker], model: ScriptedLLM, first: int, second: int
) -> None:
    a = pair[0]
    thread, run = await _slow_run(a, model)
    await _started(a, thread, run)
    whole = asyncio.create_task(_follow(a, thread, run, "-1"))  # A's own, from the start
    before = await _follow(pair[first], thread, run, "-1", stop_after=8)
    rest = await _follow(pair[second], thread, run, before[-1][0])
    reference = await whole
    together = before + rest
    assert [i for i, _, _ in together] == [i for i, _, _ in reference], "missed or doubled"
    assert together == reference
    assert _last_text(together[-1][2]) == ANSWER


async def test_a_run_enqueued_on_one_worker_is_joined_and_streamed_on_the_other(
    pair: list[Worker], model: ScriptedLLM
) -> None:
    a, b = pair
    thread, first = await _slow_run(a, model)
    queued = await a.client.post(
        f"/threads/{thread}/runs",
        json={
            "assistant_id": "ducklm",
            "input": prompt("again"),
            "context": QUIET,
            "multitask_strategy": "enqueue",
        },
    )
    second = queued.json()["run_id"]
    assert await _status(b, thread, second) == "pending"
    async with _sdk(b) as on_b:
        parts, joined = await asyncio.gather(
            collect(on_b.runs.join_stream(thread, second, stream_mode="values")),
            on_b.runs.join(thread, second),
        )
    assert await _status(a, thread, first) == "success"
    assert await _status(a, thread, second) == "success"
    assert isinstance(joined, dict) and _last_text(joined) == ANSWER
    assert [m["content"] for m in joined["messages"] if m["type"] == "human"] == ["hi", "again"]
    values = [p.data for p in parts if p.event == "values"]
    assert values and values[-1] == joined


async def test_a_run_is_cancelled_through_the_other_worker(
    pair: list[Worker], model: ScriptedLLM
) -> None:
    a, b = pair
    model.set_default(reply("never said", delay_s=30))
    thread = (await a.client.post("/threads", json={})).json()["thread_id"]
    body = {"assistant_id": "ducklm", "input": prompt("wait"), "context": QUIET}
    run = (await a.client.post(f"/threads/{thread}/runs", json=body)).json()["run_id"]
    await _started(a, thread, run)
    started = time.monotonic()
    async with _sdk(b) as on_b:
        result = await on_b.runs.cancel(thread, run, wait=True)
    assert time.monotonic() - started < 10
    assert await _status(a, thread, run) == "interrupted"
    assert await _status(b, thread, run) == "interrupted"
    assert isinstance(result, dict) and "never said" not in json.dumps(result)
    assert (await b.client.get(f"/threads/{thread}")).json()["status"] != "busy"


async def test_a_follower_that_leaves_the_other_worker_cancels_the_run(
    pair: list[Worker], model: ScriptedLLM
) -> None:
    a, b = pair
    thread, run = await _slow_run(a, model)
    await _started(a, thread, run)
    path = f"/threads/{thread}/runs/{run}/stream"
    params = {"cancel_on_disconnect": "true"}
    async with b.client.stream("GET", path, params=params, timeout=60) as response:
        async for line in response.aiter_lines():
            if line == "event: messages":
                break  # B follows live: leave now
    async with asyncio.timeout(15):
        while await _status(a, thread, run) == "running":  # noqa: ASYNC110  over HTTP
            await asyncio.sleep(0.1)
    assert await _status(a, thread, run) == "interrupted"
