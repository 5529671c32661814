"""Three `ducklm serve` workers on one PostgreSQL: any worker answers, a dead one's run goes on.

One set of three workers serves every case of the module (CI time): each case uses the
workers still alive, its own conversation, and the one scripted model they share.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import pytest_asyncio

from ducklm.config.settings import Settings
from ducklm.runtime.reaper import LEASE_LOST
from tests.support.fake_sudo import PASSWORD, install_fake_sudo
from tests.support.postgres import fresh_schema, require_postgres
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.workers import Worker, shared_settings_under, workers

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

QUIET = {"critic": False, "memory": False}
TAKEOVER_LIMIT_S = 20.0
HELD_S = 45.0  # the model holds the killed worker's reply longer than any take-over


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedLLM]:
    """The scripted model every worker asks."""
    with ScriptedLLM() as server:
        yield server


@pytest.fixture(scope="module")
def shared_settings(model: ScriptedLLM, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The settings the workers share: the model and one workspace."""
    root = tmp_path_factory.mktemp("three-workers")
    return shared_settings_under(root, model.base_url, model_retry_initial_interval=0.01)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def database() -> AsyncIterator[str]:
    """A fresh schema on the test server, for the three workers."""
    async with fresh_schema(require_postgres()) as url:
        yield url


@pytest.fixture(scope="module")
def sudo_log(shared_settings: Settings) -> Iterator[Path]:
    """The fake `sudo` (tests/support/fake_sudo.py) first on the workers' PATH; its log."""
    with pytest.MonkeyPatch.context() as patch:
        yield install_fake_sudo(shared_settings.data_dir.parent, patch)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def three(
    shared_settings: Settings, database: str, sudo_log: Path
) -> AsyncIterator[list[Worker]]:
    """Three workers on one database, started side by side (with the fake sudo on PATH)."""
    folder = shared_settings.data_dir.parent
    async with workers(shared_settings, database, folder, 3) as started:  # PATH: ours
        yield started


def _alive(three: list[Worker]) -> list[Worker]:
    alive = [w for w in three if w.alive]
    assert len(alive) >= 2, "a case needs two living workers"
    return alive


async def _start(worker: Worker, message: str, conversation: str) -> dict[str, Any]:
    """Start a turn on `worker` in the background; its task as another worker lists it."""
    body = {"message": message, "conversation_id": conversation, **QUIET}
    response = await worker.client.post("/v1/chat", json=body, timeout=5)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


async def _task_of(worker: Worker, conversation: str) -> dict[str, Any]:
    for _ in range(200):
        listed = await worker.client.get("/v1/tasks", params={"conversation_id": conversation})
        if tasks := listed.json():
            task: dict[str, Any] = tasks[0]
            return task
        await asyncio.sleep(0.05)
    raise AssertionError(f"no task of {conversation} appeared")


async def _requests_reach(model: ScriptedLLM, count: int) -> None:
    for _ in range(600):
        if len(model.requests) >= count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the model got {len(model.requests)} requests, not {count}")


async def _runs(url: str, thread_id: str) -> list[tuple[str, str | None]]:
    async with await psycopg.AsyncConnection.connect(url) as conn:
        cursor = await conn.execute(
            "SELECT status, error FROM runs WHERE thread_id = %s ORDER BY started_at",
            (thread_id,),
        )
        return [(row[0], row[1]) for row in await cursor.fetchall()]


async def test_a_run_is_cancelled_through_another_worker(
    three: list[Worker], model: ScriptedLLM, database: str
) -> None:
    runner, other, *_ = _alive(three)
    asked = len(model.requests)
    model.script(reply("too late", delay_s=20))
    body = {"message": "take your time", "conversation_id": "cancelled", **QUIET}
    running = asyncio.create_task(runner.client.post("/v1/chat", json=body))
    await _requests_reach(model, asked + 1)
    task = await _task_of(other, "cancelled")
    cancelled = await other.client.post(f"/v1/tasks/{task['task_id']}/cancel")
    assert cancelled.json() == {"task_id": task["task_id"], "status": "cancelled"}
    assert (await asyncio.wait_for(running, 10)).json()["status"] == "cancelled"
    assert await _runs(database, "cancelled") == [("cancelled", None)]


async def test_approval_and_password_are_answered_through_other_workers(
    three: list[Worker], model: ScriptedLLM, database: str, sudo_log: Path
) -> None:
    asker, approver, *rest = _alive(three)
    giver = rest[0] if rest else asker
    model.script(reply(tool_calls=[call("shell_exec", command="sudo ls /")]))
    paused = await _start(asker, "list / as root", "sudo-elsewhere")
    assert paused["status"] == "interrupted", paused  # sudo asks first
    task_id = paused["task_id"]

    approved = await _events(approver, f"/v1/tasks/{task_id}/continue/stream", _APPROVE)
    asked = [e for e in approved if e["type"] == "password_requested"]
    assert asked and asked[0]["request"]["command"] == "sudo ls /", approved
    assert approved[-1]["status"] == "interrupted"

    # The password goes to a third worker: it keeps it in its own memory and runs on.
    model.script(reply("Listed."))
    given = await _events(giver, f"/v1/tasks/{task_id}/password/stream", {"password": PASSWORD})
    assert given[-1]["type"] == "done" and given[-1]["status"] == "completed", given[-1]
    finished = next(e for e in given if e["type"] == "tool_call_finished")
    assert finished["exit_code"] == 0, finished["output"]
    assert await asyncio.to_thread(sudo_log.read_text) == "match\n"  # on stdin, once
    statuses = [status for status, _ in await _runs(database, "sudo-elsewhere")]
    assert statuses == ["interrupted", "interrupted", "completed"]
    stored = (await asker.client.get(f"/v1/tasks/{task_id}/events")).text
    assert PASSWORD not in stored  # the audit every worker reads never held it


_APPROVE = {"decisions": [{"type": "approve"}], **QUIET}


async def _events(worker: Worker, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """POST `body` to one of `worker`'s event streams; its events, read to the end."""
    events = []
    async with worker.client.stream("POST", path, json=body, timeout=60) as response:
        assert response.status_code == 200, await response.aread()
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line.removeprefix("data:")))
    return events


async def test_a_killed_workers_run_goes_on_elsewhere_and_nothing_runs_twice(
    three: list[Worker], model: ScriptedLLM, database: str, shared_settings: Settings
) -> None:
    first, second, *_ = _alive(three)
    old = shared_settings.workspace / "old.log"
    await asyncio.to_thread(old.write_text, "old")
    model.script(reply(tool_calls=[call("shell_exec", command="rm old.log")]))
    paused = await _start(first, "delete old.log", "taken-over")
    assert paused["status"] == "interrupted", paused  # the delete asks first
    task_id = paused["task_id"]

    # The approval goes to another worker, which runs the delete and a command; the
    # model then holds its next reply, and that worker dies while it waits.
    asked = len(model.requests)
    append = call("shell_exec", command="echo once >> ran.txt")
    model.script(
        reply(tool_calls=[append]), reply("held", delay_s=HELD_S), reply("Deleted, noted.")
    )
    body = {"decisions": [{"type": "approve"}], **QUIET}
    seen: list[str] = []  # the SSE ids the killed worker's client got
    answering = asyncio.create_task(_answer(second, task_id, body, seen))
    await _requests_reach(model, asked + 2)
    await second.kill()
    killed_at = time.monotonic()
    answering.cancel()
    await asyncio.gather(answering, return_exceptions=True)

    survivor = next(w for w in _alive(three) if w is not first) if first.alive else None
    reader = survivor or _alive(three)[0]
    # Its client reconnects to another worker where it left off: the stream goes on
    # through the take-over to the end, nothing twice.
    assert seen, "the killed worker's client got no event"
    rest = await asyncio.wait_for(_rest(reader, task_id, seen[-1]), TAKEOVER_LIMIT_S + 10)
    ids = [ident for ident, _ in rest]
    assert len(ids) == len(set(ids)) and seen[-1] not in ids, (seen[-1], ids)
    assert rest[-1][1]["type"] == "done" and rest[-1][1]["status"] == "completed", rest[-1]
    assert rest[-1][1]["answer"] == "Deleted, noted."
    ended = await _ended(reader, task_id, killed_at + TAKEOVER_LIMIT_S)
    assert ended["status"] == "completed", ended
    assert time.monotonic() - killed_at < TAKEOVER_LIMIT_S
    assert ended["answer"] == "Deleted, noted."

    ran = shared_settings.workspace / "ran.txt"
    assert await asyncio.to_thread(ran.read_text) == "once\n"  # the command ran once
    assert not await asyncio.to_thread(old.exists)
    runs = await _runs(database, "taken-over")
    # Asked (stopped at the question), approved (killed, taken over), gone on: once each.
    assert [status for status, _ in runs] == ["interrupted", "interrupted", "completed"]
    assert runs[1:] == [("interrupted", LEASE_LOST), ("completed", None)]
    events = (await reader.client.get(f"/v1/tasks/{task_id}/events")).json()
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(set(seqs))
    kinds = [e["type"] for e in events]
    assert kinds.count("run_started") == 3  # asked, approved (killed), taken over
    assert kinds.count("done") == 2  # the question, then the end: none for the dead run
    assert events[-1]["type"] == "done" and events[-1]["status"] == "completed"
    # The dead worker's last events may not have left its audit buffer (written every
    # 50 ms); whatever did is there once, and the checkpoint has every result.
    calls = [e["call_id"] for e in events if e["type"] == "tool_call_finished"]
    assert calls and len(calls) == len(set(calls)), calls
    conversation = (await reader.client.get("/v1/conversations/taken-over")).json()
    tools = [m for m in conversation["messages"] if m["role"] == "tool"]
    assert len(tools) == 2, conversation["messages"]  # one result each in the checkpoints


async def _answer(worker: Worker, task_id: str, body: dict[str, Any], seen: list[str]) -> None:
    """Approve on `worker` and read the stream until it breaks; each SSE id into `seen`."""
    path = f"/v1/tasks/{task_id}/continue/stream"
    try:
        async with worker.client.stream("POST", path, json=body, timeout=None) as response:
            async for line in response.aiter_lines():
                if line.startswith("id:"):
                    seen.append(line.removeprefix("id:").strip())
    except httpx.HTTPError:
        pass  # the worker was killed under it


async def _rest(worker: Worker, task_id: str, last_id: str) -> list[tuple[str, dict[str, Any]]]:
    """The task's stream on `worker` after `last_id`, to its end: (SSE id, event)."""
    seen, ident = [], ""
    headers = {"Last-Event-ID": last_id}
    path = f"/v1/tasks/{task_id}/stream"
    async with worker.client.stream("GET", path, headers=headers, timeout=None) as response:
        assert response.status_code == 200, await response.aread()
        async for line in response.aiter_lines():
            if line.startswith("id:"):
                ident = line.removeprefix("id:").strip()
            elif line.startswith("data:"):
                seen.append((ident, json.loads(line.removeprefix("data:"))))
    return seen


async def _ended(worker: Worker, task_id: str, deadline: float) -> dict[str, Any]:
    while time.monotonic() < deadline + 5:
        task: dict[str, Any] = (await worker.client.get(f"/v1/tasks/{task_id}")).json()
        if task["status"] not in ("running", "interrupted"):
            return task
        await asyncio.sleep(0.2)
    said = await asyncio.to_thread(worker.log_tail)
    raise AssertionError(f"task {task_id} did not end: {task}\n{said}")
