"""A reopened conversation shows what happened: `GET /v1/conversations/{id}/transcript`.

One conversation gets a stopped answer, a failed turn, a denied call, an approved one
(beside one the policy allowed) and a call cancelled at its question, each made through
the API against the scripted model; the transcript must hold every one, labelled.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served, stream

QUIET = {"critic": False, "memory": False}
SLOW = " ".join(f"word{n}" for n in range(60))


async def _send(served: Served, conversation: str, message: str) -> list[dict[str, Any]]:
    body = {"message": message, "conversation_id": conversation, **QUIET}
    return await stream(served, "/v1/chat/stream", body)


async def _answer(served: Served, asked: dict[str, Any], decision: dict[str, Any]) -> None:
    body = {"decisions": [decision], "interrupt_id": asked["interrupt_id"]}
    events = await stream(served, f"/v1/tasks/{asked['task_id']}/continue/stream", body)
    assert events[-1]["status"] == "completed"


async def _stop_mid_answer(served: Served, conversation: str, llm: ScriptedLLM) -> str:
    """Send a message whose answer streams slowly; stop it after a few tokens: what was seen."""
    llm.script(reply(SLOW, chunk_delay_s=0.05))
    body = {"message": "talk slowly", "conversation_id": conversation, **QUIET}
    seen: list[str] = []
    async with served.client.stream("POST", "/v1/chat/stream", json=body) as response:
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            item = json.loads(line.removeprefix("data:"))
            if item["type"] != "token":
                continue
            seen.append(item["text"])
            if len(seen) == 3:
                stopped = await served.client.post(f"/v1/tasks/{item['task_id']}/cancel")
                assert stopped.json()["status"] == "cancelled"
    return "".join(seen)


async def _asked(
    served: Served, conversation: str, llm: ScriptedLLM, message: str
) -> dict[str, Any]:
    # Each turn writes other text: the same call again would be answered from the first.
    write = call("file_write", path="a.txt", content=message, overwrite=True)
    llm.script(reply(tool_calls=[call("list_dir", path="."), write]))
    events = await _send(served, conversation, message)
    assert events[-1]["status"] == "interrupted"
    return next(e for e in events if e["type"] == "approval_requested")


async def test_a_reopened_conversation_shows_each_turn_as_it_happened(
    served: Served, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "a.txt").write_text, "old")
    conversation = (await served.client.post("/v1/conversations", json={})).json()["id"]

    seen = await _stop_mid_answer(served, conversation, llm)
    # Nothing scripted: the model server answers every request with an error.
    failed = await _send(served, conversation, "this one fails")
    assert failed[-1]["status"] == "failed"
    asked = await _asked(served, conversation, llm, "deny it")
    llm.script(reply("Left it alone."))
    await _answer(served, asked, {"type": "reject", "message": "not now"})
    asked = await _asked(served, conversation, llm, "allow it")
    llm.script(reply("Overwritten."))
    await _answer(served, asked, {"type": "approve"})
    dropped = await _asked(served, conversation, llm, "never mind")
    assert (await served.client.post(f"/v1/tasks/{dropped['task_id']}/cancel")).status_code == 200

    response = await served.client.get(f"/v1/conversations/{conversation}/transcript")
    assert response.status_code == 200
    stopped, failing, denied, approved, cancelled = response.json()["exchanges"]
    assert [stopped["message"], failing["message"]] == ["talk slowly", "this one fails"]

    assert stopped["status"] == "cancelled"
    assert stopped["partial"].startswith(seen) and SLOW.startswith(stopped["partial"])
    assert len(seen) > 0 and stopped["messages"] == []

    assert failing["status"] == "failed"
    assert failing["error"] and "Traceback" not in failing["error"]
    assert failing["partial"] == "" and failing["messages"] == []

    listing, write = denied["calls"]
    assert (listing["outcome"], listing["by"]) == ("approved", "policy")
    assert (write["outcome"], write["by"], write["reason"]) == ("denied", "you", "not now")
    assert write["label"] == "denied by you: not now"
    (question,) = denied["questions"]
    assert question["outcome"] == "Denied" and question["call_ids"] == [write["call_id"]]
    assert question["event"]["request"]["action_requests"][0]["name"] == "file_write"

    _, write = approved["calls"]
    assert (write["outcome"], write["by"], write["decision"]) == ("approved", "you", "approve")
    assert [q["outcome"] for q in approved["questions"]] == ["Allowed once"]
    assert approved["messages"][-1]["content"] == "Overwritten."

    assert cancelled["status"] == "cancelled"
    assert [c["outcome"] for c in cancelled["calls"]] == ["cancelled", "cancelled"]
    assert [q["outcome"] for q in cancelled["questions"]] == ["Cancelled"]


async def test_an_unknown_conversation_has_no_transcript(served: Served) -> None:
    response = await served.client.get("/v1/conversations/nope/transcript")
    assert response.status_code == 404
    assert response.json()["detail"] == "no conversation with id 'nope'"
