"""Two `ducklm serve` processes on one PostgreSQL database serve the same conversations.

Each process has its own data dir (its embedded Qdrant, log and nothing else shared) and
the same token; checkpoints and DuckLM's tables are in one schema of the test server.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from ducklm.config.settings import Settings
from tests.support.cli import cli_env
from tests.support.langgraph_dev import spawn_logged, stop
from tests.support.postgres import fresh_schema, require_postgres
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.workers import announced_url

pytestmark = pytest.mark.slow

TOKEN = "shared-token-0123456789abcdef"
QUIET = {"critic": False, "memory": False}
CONVERSATIONS = 50


@pytest.fixture
async def shared_url() -> AsyncIterator[str]:
    """A fresh schema on the test server, for both processes."""
    async with fresh_schema(require_postgres()) as url:
        yield url


@asynccontextmanager
async def ducklm_serve(
    settings: Settings, url: str, name: str, folder: Path
) -> AsyncIterator[httpx.AsyncClient]:
    """`ducklm serve --port 0` on `url` with its own data dir; a client with the token."""
    env = {
        **cli_env(settings),
        "DUCK_DATA_DIR": str(folder / f"data-{name}"),
        "DUCK_DATABASE_URL": url,
        "DUCK_API_TOKEN": TOKEN,
    }
    log = folder / f"serve-{name}.log"
    command = [sys.executable, "-m", "ducklm.cli.main", "serve", "--port", "0"]
    process = await asyncio.to_thread(spawn_logged, command, folder, env, log)
    try:
        base = await asyncio.to_thread(announced_url, process, log, 90)
        client = await asyncio.to_thread(
            httpx.AsyncClient,
            base_url=base,
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=120,
        )
        async with client:
            yield client
    finally:
        await asyncio.to_thread(stop, process)


async def _chat(client: httpx.AsyncClient, message: str, conversation: str) -> dict[str, Any]:
    body = {"message": message, "conversation_id": conversation, **QUIET}
    response = await client.post("/v1/chat", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


async def test_a_conversation_goes_on_on_the_other_server(
    settings: Settings, llm: ScriptedLLM, shared_url: str, tmp_path: Path
) -> None:
    llm.set_default(reply("noted"))
    async with (
        ducklm_serve(settings, shared_url, "a", tmp_path) as a,
        ducklm_serve(settings, shared_url, "b", tmp_path) as b,
    ):
        first = await _chat(a, "my name is Ada", "c1")
        assert first["status"] == "completed"
        second = await _chat(b, "what is my name?", "c1")
        assert second["status"] == "completed"
        # B's model request carried A's turn: the checkpoint is shared, not copied.
        sent = " ".join(str(m.get("content")) for m in llm.requests[-1]["messages"])
        assert "my name is Ada" in sent
        conversation = (await a.get("/v1/conversations/c1")).json()
        user_turns = [m["content"] for m in conversation["messages"] if m["role"] == "user"]
        assert user_turns == ["my name is Ada", "what is my name?"]
        tasks = (await b.get("/v1/tasks", params={"conversation_id": "c1"})).json()
        assert [t["task_id"] for t in tasks] == [second["task_id"], first["task_id"]]
        events = (await a.get(f"/v1/tasks/{second['task_id']}/events")).json()
        seqs = [e["seq"] for e in events]
        assert seqs == sorted(set(seqs)) and seqs[0] > max(
            e["seq"] for e in (await b.get(f"/v1/tasks/{first['task_id']}/events")).json()
        )


async def test_a_task_running_on_one_server_is_cancelled_from_the_other(
    settings: Settings, llm: ScriptedLLM, shared_url: str, tmp_path: Path
) -> None:
    llm.script(reply("too late", delay_s=30))
    async with (
        ducklm_serve(settings, shared_url, "a", tmp_path) as a,
        ducklm_serve(settings, shared_url, "b", tmp_path) as b,
    ):
        body = {"message": "take your time", "conversation_id": "c1", **QUIET}
        running = asyncio.create_task(a.post("/v1/chat", json=body))
        for _ in range(600):  # until A's run waits on the model
            if llm.requests:
                break
            await asyncio.sleep(0.05)
        (task,) = (await b.get("/v1/tasks", params={"conversation_id": "c1"})).json()
        assert task["status"] == "running"
        cancelled = await b.post(f"/v1/tasks/{task['task_id']}/cancel")
        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json() == {"task_id": task["task_id"], "status": "cancelled"}
        ended = (await asyncio.wait_for(running, 10)).json()
        assert ended["status"] == "cancelled"
        assert (await a.get(f"/v1/tasks/{task['task_id']}")).json()["status"] == "cancelled"
        again = await b.post(f"/v1/tasks/{task['task_id']}/cancel")
        assert again.status_code == 409


async def test_fifty_conversations_on_two_servers_lose_nothing(
    settings: Settings, llm: ScriptedLLM, shared_url: str, tmp_path: Path
) -> None:
    llm.set_default(reply("done"))
    async with (
        ducklm_serve(settings, shared_url, "a", tmp_path) as a,
        ducklm_serve(settings, shared_url, "b", tmp_path) as b,
    ):
        servers = (a, b)
        results = await asyncio.gather(
            *(_chat(servers[n % 2], f"message {n}", f"conv-{n}") for n in range(CONVERSATIONS))
        )
        assert [r["status"] for r in results] == ["completed"] * CONVERSATIONS
        listed = (await a.get("/v1/conversations")).json()
        assert {c["id"] for c in listed} == {f"conv-{n}" for n in range(CONVERSATIONS)}
        for n, result in enumerate(results):
            other = servers[(n + 1) % 2]  # read back through the server that did not run it
            conversation = (await other.get(f"/v1/conversations/conv-{n}")).json()
            assert [m["content"] for m in conversation["messages"]] == [f"message {n}", "done"]
            events = (await other.get(f"/v1/tasks/{result['task_id']}/events")).json()
            assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
            assert events[-1]["type"] == "done"
