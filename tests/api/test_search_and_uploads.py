"""Search over conversations (`GET /v1/search`) and workspace files
(`POST`/`GET /v1/conversations/{id}/files`) over real HTTP: a word said in another
conversation found at its message, an upload that lands and is undone, and the
refusals with their status codes and reasons."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from ducklm.config.settings import Settings
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served

QUIET = {"critic": False, "memory": False}
LIMIT = 4096
INDEXED_WITHIN_S = 120.0  # the first encode loads the embedding model on a busy machine


@pytest.fixture
def server_settings(settings: Settings) -> Settings:
    """A small upload limit, so the 413 needs no large body."""
    return settings.model_copy(update={"upload_max_bytes": LIMIT})


async def chat(served: Served, llm: ScriptedLLM, message: str, answer: str) -> str:
    llm.script(reply(answer))
    response = await served.client.post("/v1/chat", json={"message": message, **QUIET}, timeout=300)
    assert response.json()["status"] == "completed", response.text
    conversation: str = response.json()["conversation_id"]
    return conversation


async def search_until(served: Served, query: str, found: Any) -> list[dict[str, Any]]:
    """The hits for `query` once `found(hits)` holds (episodes are written behind a turn)."""
    deadline = time.monotonic() + INDEXED_WITHIN_S
    while True:
        response = await served.client.get("/v1/search", params={"q": query}, timeout=300)
        assert response.status_code == 200, response.text
        hits: list[dict[str, Any]] = response.json()["hits"]
        if found(hits) or time.monotonic() > deadline:
            return hits
        await asyncio.sleep(0.5)


async def test_search_finds_a_word_said_in_another_conversation(
    served: Served, llm: ScriptedLLM
) -> None:
    porto = await chat(
        served, llm, "Plan a weekend trip for me", "Go to Porto: the Ribeira at dusk."
    )
    other = await chat(served, llm, "What is a monad?", "A monoid in the category of endofunctors.")

    def said_in_porto(hits: list[dict[str, Any]]) -> bool:
        return any(h["conversation_id"] == porto and h["kind"] == "message" for h in hits)

    hits = await search_until(served, "Porto", said_in_porto)
    (hit,) = [h for h in hits if h["conversation_id"] == porto and h["kind"] == "message"]
    assert "Porto" in hit["snippet"] and hit["speaker"] == "assistant"
    assert hit["title"] == "Plan a weekend trip for me"
    assert all(h["conversation_id"] != other for h in hits)  # nothing said there matches
    assert hit["message_id"]  # the checkpointed message's id: where the chat opens

    titled = (await served.client.get("/v1/search", params={"q": "monad"})).json()["hits"]
    assert {"conversation_id": other, "kind": "title"}.items() <= titled[0].items()


async def upload(served: Served, conversation: str, name: str, data: bytes, **fields: str) -> Any:
    files = {"file": (name, data, "application/octet-stream")}
    url = f"/v1/conversations/{conversation}/files"
    return await served.client.post(url, files=files, data=fields)


async def test_an_upload_lands_in_the_workspace_and_is_undone(
    served: Served, workspace: Path
) -> None:
    conversation = (await served.client.post("/v1/conversations", json={})).json()["id"]
    done = await upload(served, conversation, "ignored.bin", b"\x00\x01data", path="in/data.bin")
    assert done.status_code == 201, done.text
    assert done.json()["path"] == "in/data.bin" and done.json()["action"] == "created"
    assert await asyncio.to_thread((workspace / "in" / "data.bin").read_bytes) == b"\x00\x01data"

    got = await served.client.get(
        f"/v1/conversations/{conversation}/files", params={"path": "in/data.bin"}
    )
    assert got.status_code == 200 and got.content == b"\x00\x01data"
    assert got.headers["content-disposition"].startswith("attachment;")

    undone = await served.client.post(f"/v1/conversations/{conversation}/undo", json={})
    assert undone.status_code == 200, undone.text
    assert undone.json()["files"] == [{"path": "in/data.bin", "action": "removed"}]
    assert [c["call_id"] for c in undone.json()["changes"]] == [done.json()["upload_id"]]
    assert not await asyncio.to_thread((workspace / "in" / "data.bin").exists)


async def test_paths_sizes_and_existing_files_are_refused_saying_why(
    served: Served, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    await asyncio.to_thread(outside.mkdir)
    await asyncio.to_thread((outside / "secret.txt").write_text, "not yours")
    await asyncio.to_thread((workspace / "out").symlink_to, outside)
    conversation = (await served.client.post("/v1/conversations", json={})).json()["id"]

    refusals = {
        "../escape.txt": "'..' is not allowed",
        "/etc/passwd-copy": "outside the workspace",
        "out/planted.txt": "outside the workspace",  # a symlink leading out
        ".git/hooks/pre-commit": "inside .git",
    }
    for path, why in refusals.items():
        refused = await upload(served, conversation, "x.txt", b"x", path=path)
        assert refused.status_code == 422 and why in refused.json()["detail"], (path, refused.text)
    assert not await asyncio.to_thread((outside / "planted.txt").exists)

    first = await upload(served, conversation, "notes.txt", b"one")
    assert first.status_code == 201, first.text
    again = await upload(served, conversation, "notes.txt", b"two")
    assert again.status_code == 409 and "overwrite=true" in again.json()["detail"]
    replaced = await upload(served, conversation, "notes.txt", b"two", overwrite="true")
    assert replaced.status_code == 201 and replaced.json()["action"] == "replaced"

    too_big = await upload(served, conversation, "big.bin", b"x" * (LIMIT + 1))
    assert too_big.status_code == 413 and str(LIMIT) in too_big.json()["detail"]
    assert not await asyncio.to_thread((workspace / "big.bin").exists)

    files = f"/v1/conversations/{conversation}/files"
    for path, status in {
        "out/secret.txt": 422,
        "../outside/secret.txt": 422,
        "nope.txt": 404,
    }.items():
        got = await served.client.get(files, params={"path": path})
        assert got.status_code == status, (path, got.text)
        assert "not yours" not in got.text
    missing = await upload(served, "no-such-conversation", "a.txt", b"a")
    assert missing.status_code == 404
