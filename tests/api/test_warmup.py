"""`ducklm serve` loads the embedding model behind it, and a turn never waits for it.

A real `ducklm serve` process (a fresh one: the model is not loaded yet) on the
scripted server: `/health` says `loading`, then `ready`; a turn sent meanwhile on a
memory that has records goes on without recall and says so (`recall_skipped`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from ducklm.config.settings import Settings
from ducklm.memory.warmup import STILL_LOADING
from ducklm.runtime.operator import open_operator_stores
from tests.support.cli import cli_env, run_cli, serving
from tests.support.scripted_llm import ScriptedLLM, reply

pytestmark = pytest.mark.slow

QUIET = {"critic": False, "memory": False}


async def health(client: httpx.AsyncClient) -> str:
    response = await client.get("/health")
    assert response.status_code == 200, response.text
    state: str = response.json()["checks"]["embeddings"]
    return state


async def test_health_shows_the_model_loading_and_a_turn_meanwhile_skips_recall(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    env = cli_env(settings, local_embeddings=True)
    added = await run_cli(
        "memory", "add", "My editor is Helix.", env=env, cwd=tmp_path, limit_s=300
    )
    assert added.code == 0, added.stderr
    llm.set_responder(lambda body: reply("Helix, I think."))
    token = (await run_cli("token", env=env, cwd=tmp_path)).stdout.strip()
    async with (
        serving(env, tmp_path) as (url, _),
        await asyncio.to_thread(
            httpx.AsyncClient, base_url=url, headers={"Authorization": f"Bearer {token}"}
        ) as client,
    ):
        assert await health(client) == "loading"
        body = {"message": "Which editor do I use?", **QUIET}
        answered = await client.post("/v1/chat", json=body, timeout=120)
        assert answered.json()["status"] == "completed", answered.text
        conversation = answered.json()["conversation_id"]
        for _ in range(600):  # the model loads behind the server, however long it takes
            if (state := await health(client)) != "loading":
                break
            await asyncio.sleep(0.5)
        assert state == "ready"
    async with open_operator_stores(settings) as stores:
        events = [r.data for r in await stores.audit.list(conversation)]
    (skipped,) = [e for e in events if e["type"] == "recall_skipped"]
    assert skipped["reason"] == STILL_LOADING
