"""`POST /v1/conversations/{id}/undo` over real HTTP: the diff, the files back, and the
refusals with their status codes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ducklm.config.settings import Settings
from ducklm.runtime.operator import open_operator_stores
from tests.support.disk import snapshot
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served

QUIET = {"critic": False, "memory": False}


async def chat_that_writes(served: Served, llm: ScriptedLLM) -> str:
    command = "mkdir -p out && echo hi > out/new.txt"
    llm.script(reply(tool_calls=[call("shell_exec", command=command)]), reply("Made it."))
    # The first turn loads the embedding model: on a busy machine that can take a while.
    body = {"message": "make a file", **QUIET}
    response = await served.client.post("/v1/chat", json=body, timeout=300)
    assert response.json()["status"] == "completed", response.text
    conversation: str = response.json()["conversation_id"]
    return conversation


async def test_undo_shows_the_diff_then_restores(
    served: Served, llm: ScriptedLLM, workspace: Path, server_settings: Settings
) -> None:
    before = await snapshot(workspace)
    conversation = await chat_that_writes(served, llm)
    url = f"/v1/conversations/{conversation}/undo"

    dry = await served.client.post(url, json={"dry_run": True})
    assert dry.status_code == 200, dry.text
    assert dry.json()["files"] == [{"path": "out/new.txt", "action": "removed"}]
    assert "-hi" in dry.json()["diff"]
    assert await asyncio.to_thread((workspace / "out" / "new.txt").exists)

    done = await served.client.post(url, json={})
    assert done.status_code == 200, done.text
    assert done.json()["undo_id"]
    assert await snapshot(workspace) == before
    async with open_operator_stores(server_settings) as stores:
        audited = await stores.audit.list(conversation)
    (event,) = [r.data for r in audited if r.type == "undo_applied"]
    assert event["undo_id"] == done.json()["undo_id"]


async def test_undo_refusals_say_why(served: Served, llm: ScriptedLLM, workspace: Path) -> None:
    missing = await served.client.post("/v1/conversations/nobody/undo", json={})
    assert missing.status_code == 404
    conversation = await chat_that_writes(served, llm)
    url = f"/v1/conversations/{conversation}/undo"
    both = await served.client.post(url, json={"turn": 1, "to_call": "x"})
    assert both.status_code == 422
    unknown = await served.client.post(url, json={"to_call": "no-such-call"})
    assert unknown.status_code == 404 and "no-such-call" in unknown.json()["detail"]

    await asyncio.to_thread((workspace / "out" / "new.txt").write_text, "mine now\n")
    refused = await served.client.post(url, json={})
    assert refused.status_code == 409
    assert "out/new.txt" in refused.json()["detail"]
    assert await asyncio.to_thread((workspace / "out" / "new.txt").read_text) == "mine now\n"
    forced = await served.client.post(url, json={"force": True})
    assert forced.status_code == 200
    assert not await asyncio.to_thread((workspace / "out").exists)
