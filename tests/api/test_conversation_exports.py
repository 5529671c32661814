"""Export a conversation as Markdown and JSONL, and import the JSONL back as a new one.

The conversation is made through the API against the scripted model: a tool call that
ran and was answered, then a plain answer. The import must give the same messages,
show the call, and ask the model nothing (a call read from a file is never run).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from ducklm.config.settings import Settings
from ducklm.runtime.server_file import write_server_file
from tests.support.cli import cli_env, run_cli
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served, stream

QUIET = {"critic": False, "memory": False}


async def _conversation(served: Served, llm: ScriptedLLM, workspace: Path) -> str:
    await asyncio.to_thread((workspace / "notes.md").write_text, "Porto in May.\n")
    made = await served.client.post("/v1/conversations", json={"title": "Trip notes"})
    conversation: str = made.json()["id"]
    llm.script(reply(tool_calls=[call("file_read", path="notes.md")]), reply("Porto, in May."))
    body = {"message": "where do I go?", "conversation_id": conversation, **QUIET}
    assert (await stream(served, "/v1/chat/stream", body))[-1]["status"] == "completed"
    llm.script(reply("Pack light."))
    body = {"message": "and what to pack?", "conversation_id": conversation, **QUIET}
    assert (await stream(served, "/v1/chat/stream", body))[-1]["status"] == "completed"
    return conversation


async def _messages(served: Served, conversation: str) -> list[dict[str, Any]]:
    found = await served.client.get(f"/v1/conversations/{conversation}")
    assert found.status_code == 200
    # Call ids are the file's; the rest must be the same, message for message.
    return [
        {key: value for key, value in message.items() if key != "cut"}
        for message in found.json()["messages"]
    ]


async def test_export_then_import_gives_the_same_messages(
    served: Served, llm: ScriptedLLM, workspace: Path
) -> None:
    conversation = await _conversation(served, llm, workspace)
    path = f"/v1/conversations/{conversation}/export"

    markdown = await served.client.get(path, params={"format": "md"})
    assert markdown.status_code == 200
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert markdown.headers["content-disposition"] == (
        f'attachment; filename="ducklm-{conversation}.md"'
    )
    text = markdown.text
    assert text.startswith("# Trip notes\n")
    for said in ("## You\n\nwhere do I go?", "**Tool call `file_read`**", "Porto in May.",
                 "## DuckLM\n\n", "Porto, in May.", "Pack light."):  # fmt: skip
        assert said in text, said
    assert "approved by policy" in text  # how the call was decided

    exported = await served.client.get(path, params={"format": "jsonl"})
    assert exported.headers["content-type"].startswith("application/jsonl")
    assert exported.headers["content-disposition"].endswith(f'ducklm-{conversation}.jsonl"')
    lines = [json.loads(line) for line in exported.text.splitlines()]
    assert lines[0]["type"] == "conversation"
    assert lines[0]["title"] == "Trip notes"
    kinds = {line["type"] for line in lines}
    assert kinds == {"conversation", "message", "call", "event", "outcome"}
    (called,) = [line for line in lines if line["type"] == "call"]
    assert (called["tool"], called["outcome"], called["by"]) == ("file_read", "approved", "policy")
    events = [line["event"]["type"] for line in lines if line["type"] == "event"]
    assert "tool_call_finished" in events
    assert [line["status"] for line in lines if line["type"] == "outcome"] == ["completed"] * 2

    asked = len(llm.requests)
    imported = await served.client.post("/v1/conversations/import", json={"jsonl": exported.text})
    assert imported.status_code == 201, imported.text
    copy = imported.json()
    assert copy["id"] != conversation
    assert copy["title"] == "Trip notes"
    assert await _messages(served, copy["id"]) == await _messages(served, conversation)
    assert len(llm.requests) == asked  # nothing was asked of the model, nothing ran
    # Text from a file is untrusted: whatever is not read-only asks in the copy.
    state = (await served.client.get(f"/threads/{copy['id']}/state")).json()
    assert state["values"]["taint"]["tool"] == "the imported conversation"

    transcript = (await served.client.get(f"/v1/conversations/{copy['id']}/transcript")).json()
    first = transcript["exchanges"][0]
    assert first["message"] == "where do I go?"
    assert [m["tool_calls"][0]["name"] for m in first["messages"] if m.get("tool_calls")] == [
        "file_read"
    ]
    assert transcript["exchanges"][1]["messages"][-1]["content"] == "Pack light."

    # The copy goes on like any conversation, and its history reaches the model.
    llm.script(reply("Yes, Porto."))
    body = {"message": "still Porto?", "conversation_id": copy["id"], **QUIET}
    assert (await stream(served, "/v1/chat/stream", body))[-1]["status"] == "completed"
    sent = json.dumps(llm.requests[-1]["messages"])
    assert "Porto, in May." in sent


BAD_FILES = {
    "not json": (2, "line 2 is not JSON"),
    "unknown type": (2, "line 2: unknown line type 'note'"),
    "no role": (3, "line 3: not a message: `role`"),
    "stray result": (3, "line 3: a tool result for call 'c9'"),
}


def _bad(kind: str) -> str:
    header = json.dumps({"type": "conversation", "format": "ducklm.conversation", "version": 1})
    user = json.dumps({"type": "message", "role": "user", "content": "hi"})
    broken = {
        "not json": "{oops",
        "unknown type": json.dumps({"type": "note"}),
        "no role": json.dumps({"type": "message", "content": "x"}),
        "stray result": json.dumps(
            {"type": "message", "role": "tool", "content": "x", "tool_call_id": "c9"}
        ),
    }[kind]
    lines = [header, broken] if kind in {"not json", "unknown type"} else [header, user, broken]
    return "\n".join([*lines, user]) + "\n"


async def test_a_bad_file_is_refused_by_line_and_nothing_is_imported(served: Served) -> None:
    before = (await served.client.get("/v1/conversations")).json()
    for kind, (line, said) in BAD_FILES.items():
        refused = await served.client.post("/v1/conversations/import", json={"jsonl": _bad(kind)})
        assert refused.status_code == 422, kind
        detail = refused.json()["detail"]
        assert detail.startswith(f"cannot import: {said}"), (kind, detail)
        assert f"line {line}" in detail
    no_header = json.dumps({"type": "message", "role": "user", "content": "hi"})
    refused = await served.client.post("/v1/conversations/import", json={"jsonl": no_header})
    assert "line 1: a DuckLM conversation export starts with" in refused.json()["detail"]
    empty = await served.client.post("/v1/conversations/import", json={"jsonl": "\n \n"})
    assert "the file is empty" in empty.json()["detail"]
    assert (await served.client.get("/v1/conversations")).json() == before
    missing = await served.client.get("/v1/conversations/nope/export")
    assert missing.status_code == 404
    wrong = await served.client.get("/v1/conversations/nope/export", params={"format": "pdf"})
    assert wrong.status_code == 422


async def test_ducklm_export_and_import_through_the_server(
    served: Served, llm: ScriptedLLM, workspace: Path, settings: Settings, tmp_path: Path
) -> None:
    conversation = await _conversation(served, llm, workspace)
    await write_server_file(settings.data_dir, served.url)
    env = {**cli_env(settings), "DUCK_API_TOKEN": served.token}
    target = tmp_path / "trip.jsonl"
    exported = await run_cli(
        "export", conversation, "--format", "jsonl", "-o", str(target), env=env, cwd=tmp_path
    )
    assert exported.code == 0, exported.stderr
    assert (await asyncio.to_thread(target.stat)).st_mode & 0o777 == 0o600
    printed = await run_cli("export", conversation, env=env, cwd=tmp_path)
    assert printed.stdout.startswith("# Trip notes")

    imported = await run_cli("import", str(target), env=env, cwd=tmp_path)
    assert imported.code == 0, imported.stderr
    new_id = imported.stdout.split("conversation ", 1)[1].split(":", 1)[0]
    assert await _messages(served, new_id) == await _messages(served, conversation)

    await asyncio.to_thread(target.write_text, _bad("no role"))
    refused = await run_cli("import", str(target), env=env, cwd=tmp_path)
    assert refused.code == 2
    assert "line 3: not a message: `role`" in refused.stderr
    unknown = await run_cli("export", "no-such-thread", env=env, cwd=tmp_path)
    assert unknown.code == 2
    assert "no conversation with id 'no-such-thread'" in unknown.stderr
