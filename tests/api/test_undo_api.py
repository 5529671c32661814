"""`POST /v1/conversations/{id}/undo` over real HTTP: the diff, the files back, and the
refusals with their status codes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

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
    both = await served.client.post(url, json={"turn_of": "y", "to_call": "x"})
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


async def turn_running(served: Served, llm: ScriptedLLM, conversation: str, command: str) -> None:
    llm.script(reply(tool_calls=[call("shell_exec", command=command)]), reply("Done."))
    body = {"message": "change it", "conversation_id": conversation, **QUIET}
    response = await served.client.post("/v1/chat", json=body, timeout=300)
    assert response.json()["status"] == "completed", response.text


async def changes_of(served: Served, conversation: str) -> list[dict[str, Any]]:
    response = await served.client.get(f"/v1/conversations/{conversation}/changes")
    assert response.status_code == 200, response.text
    changes: list[dict[str, Any]] = response.json()["changes"]
    return changes


async def test_a_revert_never_undoes_a_later_change_and_names_the_one_in_its_way(
    served: Served, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "a.txt").write_text, "one\n")
    conversation = (await served.client.post("/v1/conversations", json={})).json()["id"]
    url = f"/v1/conversations/{conversation}/undo"
    await turn_running(served, llm, conversation, "echo two >> a.txt")
    (overwrite,) = await changes_of(served, conversation)
    # A file of the person's, uploaded after that turn: reverting the turn must keep it.
    files = {"file": ("notes.txt", b"my notes\n", "text/plain")}
    upload = await served.client.post(f"/v1/conversations/{conversation}/files", files=files)
    assert upload.status_code == 201, upload.text
    await turn_running(served, llm, conversation, "echo three >> a.txt")
    later = (await changes_of(served, conversation))[-1]

    refused = await served.client.post(url, json={"turn_of": overwrite["call_id"]})
    assert refused.status_code == 409, refused.text
    assert "changed again later" in refused.json()["detail"]
    assert later["call_id"] in refused.json()["detail"], "it names the change in its way"
    assert await asyncio.to_thread((workspace / "a.txt").read_text) == "one\ntwo\nthree\n"

    dry = await served.client.post(url, json={"turn_of": overwrite["call_id"], "dry_run": True})
    assert [c["call_id"] for c in dry.json()["changed_later"]] == [later["call_id"]]
    assert dry.json()["files"] == [{"path": "a.txt", "action": "restored"}]

    forced = await served.client.post(url, json={"turn_of": overwrite["call_id"], "force": True})
    assert forced.status_code == 200, forced.text
    assert [c["id"] for c in forced.json()["changes"]] == [overwrite["id"]]
    assert await asyncio.to_thread((workspace / "a.txt").read_text) == "one\n"
    assert await asyncio.to_thread((workspace / "notes.txt").read_bytes) == b"my notes\n"


async def test_a_reverted_turn_reads_as_reverted_and_is_not_reverted_twice(
    served: Served, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "a.txt").write_text, "one\n")
    conversation = (await served.client.post("/v1/conversations", json={})).json()["id"]
    url = f"/v1/conversations/{conversation}/undo"
    await turn_running(served, llm, conversation, "echo two >> a.txt")
    (first,) = await changes_of(served, conversation)
    files = {"file": ("notes.txt", b"later\n", "text/plain")}
    await served.client.post(f"/v1/conversations/{conversation}/files", files=files)

    done = await served.client.post(url, json={"turn_of": first["call_id"]})
    assert done.status_code == 200, done.text
    assert await asyncio.to_thread((workspace / "notes.txt").exists), "the later upload stays"

    # What a page reloaded later reads: the turn is reverted, by that undo.
    listed = {c["id"]: c for c in await changes_of(served, conversation)}
    assert listed[first["id"]]["reverted_by"] == done.json()["undo_id"]
    assert listed[done.json()["undo_id"]]["kind"] == "undo"
    assert [c["reverted_by"] for c in listed.values() if c["kind"] == "upload"] == [None]
    again = await served.client.post(url, json={"turn_of": first["call_id"]})
    assert again.status_code == 409 and "reverted already" in again.json()["detail"]
    assert await asyncio.to_thread((workspace / "notes.txt").read_bytes) == b"later\n"
