"""The run queue across two `ducklm serve` workers on one PostgreSQL (issue 32, item 3).

Worker A may run one run at a time (`DUCK_WORKER_RUNS=1`), worker B the default. A
background run created on A while A is full is started by B; two runs enqueued on one
thread start in order, never both at once; a pending run cancelled through the other
worker never starts; a run enqueued on a busy thread on A starts after A is killed with
SIGKILL, on B, once. One pair of workers serves every case (CI
time); the kill comes last.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg
import pytest
import pytest_asyncio

from ducklm.config.settings import Settings
from tests.support.agent_runs import QUIET, prompt
from tests.support.postgres import fresh_schema, require_postgres
from tests.support.scripted_llm import Reply, ScriptedLLM, reply
from tests.support.workers import Worker, shared_settings_under, workers_in_turn

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

HOLD_S = 20.0
"""How long the model holds the first answer to a `hold` prompt (later ones: at once)."""
SETTLE_S = 30.0
BEAT = {"DUCK_LEASE_HEARTBEAT_S": "1"}  # a dead worker's run is taken over within ~4 s


class Model:
    """The scripted model: answers each prompt with its text, holding `hold` ones once."""

    def __init__(self, llm: ScriptedLLM) -> None:
        self.llm = llm
        self.asked: Counter[str] = Counter()
        self._lock = threading.Lock()
        llm.set_responder(self._answer)

    def _answer(self, body: dict[str, Any]) -> Reply:
        users = [m for m in body["messages"] if m.get("role") == "user"]
        text = str(users[-1]["content"]) if users else ""
        with self._lock:  # the server answers on several threads
            first = self.asked[text] == 0
            self.asked[text] += 1
        held = first and text.startswith("hold")
        return reply(f"answered {text}", delay_s=HOLD_S if held else 0.0)

    async def asked_for(self, text: str) -> None:
        """Wait until the model has been asked about `text`."""
        async with asyncio.timeout(SETTLE_S):
            while not self.asked[text]:  # noqa: ASYNC110  the model server is a thread
                await asyncio.sleep(0.05)


@pytest.fixture(scope="module")
def model() -> Iterator[Model]:
    """The scripted model both workers ask."""
    with ScriptedLLM() as server:
        yield Model(server)


@pytest.fixture(scope="module")
def shared_settings(model: Model, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The settings the workers share: the model and one workspace."""
    root = tmp_path_factory.mktemp("ap-queue-across-workers")
    return shared_settings_under(root, model.llm.base_url)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def database() -> AsyncIterator[str]:
    """A fresh schema on the test server, for both workers."""
    async with fresh_schema(require_postgres()) as url:
        yield url


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pair(shared_settings: Settings, database: str) -> AsyncIterator[list[Worker]]:
    """A (one run at a time) and B, started one after the other."""
    folder = shared_settings.data_dir.parent
    envs = {name: {**BEAT, "DUCK_WORKER_RUNS": runs} for name, runs in (("a", "1"), ("b", "8"))}
    async with workers_in_turn(shared_settings, database, folder, envs) as started:
        yield started


async def _thread(worker: Worker) -> str:
    created = await worker.client.post("/threads", json={})
    assert created.status_code == 200, created.text
    return str(created.json()["thread_id"])


async def _create(worker: Worker, thread: str, text: str, **extra: Any) -> dict[str, Any]:
    """A background run of `text` on `thread`, created through `worker`."""
    body = {"assistant_id": "ducklm", "input": prompt(text), "context": QUIET, **extra}
    created = await worker.client.post(f"/threads/{thread}/runs", json=body)
    assert created.status_code == 200, created.text
    run: dict[str, Any] = created.json()
    assert run["status"] == "pending"
    return run


async def _status(worker: Worker, thread: str, run: str) -> str:
    return str((await worker.client.get(f"/threads/{thread}/runs/{run}")).json()["status"])


async def _ends(worker: Worker, thread: str, run: str) -> None:
    """Wait until the run has succeeded, as `worker` sees it."""
    async with asyncio.timeout(SETTLE_S):
        while (status := await _status(worker, thread, run)) != "success":
            assert status in ("pending", "running"), status
            await asyncio.sleep(0.1)


async def _duck_runs(url: str, thread: str) -> list[tuple[str, str, float, float | None]]:
    """DuckLM's runs of `thread`: (status, lease owner, started, finished), oldest first."""
    async with await psycopg.AsyncConnection.connect(url) as conn:
        cursor = await conn.execute(
            "SELECT status, lease_owner, started_at, finished_at FROM runs "
            "WHERE thread_id = %s AND kind = 'turn' ORDER BY started_at",
            (thread,),
        )
        return [(r[0], r[1], r[2], r[3]) for r in await cursor.fetchall()]


async def _human_texts(worker: Worker, thread: str) -> list[str]:
    state = (await worker.client.get(f"/threads/{thread}/state")).json()
    return [m["content"] for m in state["values"]["messages"] if m["type"] == "human"]


async def test_a_run_past_a_full_worker_is_started_by_another(
    pair: list[Worker], model: Model, database: str
) -> None:
    a, b = pair
    held_thread = await _thread(a)
    held = await _create(a, held_thread, "hold: the only run A may run")
    await model.asked_for("hold: the only run A may run")
    thread = await _thread(a)
    quick = await _create(a, thread, "quick")
    await _ends(a, thread, quick["run_id"])
    assert await _status(a, held_thread, held["run_id"]) == "running"  # A is still full
    (held_run,) = await _duck_runs(database, held_thread)
    (quick_run,) = await _duck_runs(database, thread)
    assert held_run[1] != quick_run[1]  # leased by another worker: B started it
    assert await _human_texts(b, thread) == ["quick"]
    cancelled = await a.client.post(f"/threads/{held_thread}/runs/{held['run_id']}/cancel")
    assert cancelled.status_code == 202


async def test_runs_enqueued_on_a_thread_start_in_order_one_at_a_time(
    pair: list[Worker], model: Model, database: str
) -> None:
    a, b = pair
    thread = await _thread(b)
    first = await _create(b, thread, "first in line")
    later = [
        await _create(w, thread, text, multitask_strategy="enqueue")
        for w, text in ((a, "second in line"), (b, "third in line"))
    ]
    await _ends(a, thread, later[-1]["run_id"])
    for run in (first, *later):
        assert await _status(b, thread, run["run_id"]) == "success"
    texts = ["first in line", "second in line", "third in line"]
    assert await _human_texts(a, thread) == texts
    runs = await _duck_runs(database, thread)
    assert [r[0] for r in runs] == ["completed"] * 3
    for before, after in itertools.pairwise(runs):
        assert before[3] is not None and before[3] <= after[2]  # never both at once
    assert [model.asked[t] for t in texts] == [1, 1, 1]


async def test_a_pending_run_cancelled_through_another_worker_never_starts(
    pair: list[Worker], model: Model
) -> None:
    a, b = pair
    thread = await _thread(b)
    held = await _create(b, thread, "hold: before the cancelled one")
    await model.asked_for("hold: before the cancelled one")
    queued = await _create(a, thread, "never", multitask_strategy="enqueue")
    cancelled = await b.client.post(f"/threads/{thread}/runs/{queued['run_id']}/cancel")
    assert cancelled.status_code == 202
    await b.client.post(f"/threads/{thread}/runs/{held['run_id']}/cancel?wait=true")
    await asyncio.sleep(1.5)  # three drainer polls with the thread free
    assert await _status(a, thread, queued["run_id"]) == "interrupted"
    assert model.asked["never"] == 0
    metrics = (await a.client.get("/metrics")).text
    assert "ducklm_queue_depth 0.0" in metrics


async def test_a_run_enqueued_on_a_killed_worker_starts_elsewhere_once(
    pair: list[Worker], model: Model, database: str
) -> None:
    a, b = pair
    thread = await _thread(a)
    body = {"assistant_id": "ducklm", "input": prompt("hold: killed"), "context": QUIET}
    # A client waits for the first run: it starts on A whatever A's room.
    streaming = asyncio.create_task(a.client.post(f"/threads/{thread}/runs/wait", json=body))
    await model.asked_for("hold: killed")
    queued = await _create(a, thread, "after the kill", multitask_strategy="enqueue")
    await a.kill()
    await asyncio.gather(streaming, return_exceptions=True)  # its connection dies with A
    await _ends(b, thread, queued["run_id"])
    assert model.asked["after the kill"] == 1  # started once, by B
    assert await _human_texts(b, thread) == ["hold: killed", "after the kill"]
    runs = await _duck_runs(database, thread)
    # A's run taken over by B (interrupted, then going on there), then the queued one.
    assert [r[0] for r in runs] == ["interrupted", "completed", "completed"]
    assert runs[0][1] == runs[1][1] == runs[2][1]  # B's: the reaper's, and the runs after
    assert runs[1][3] is not None and runs[1][3] <= runs[2][2]
