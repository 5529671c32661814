"""Regenerate and edit-and-resend as branches, over real HTTP on the scripted model.

A branch is a fork from the checkpoint before the message (LangGraph time travel): the
listing shows each message's versions, a switch makes another version the head (the
transcript, the next message and the Agent Protocol door follow it), and a write in a
regenerated turn asks the person again: an "allow once" on the other branch is not reused.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served, stream

QUIET = {"critic": False, "memory": False}


async def _send(served: Served, conversation: str, message: str) -> list[dict[str, Any]]:
    body = {"message": message, "conversation_id": conversation, **QUIET}
    return await stream(served, "/v1/chat/stream", body)


async def _fork(
    served: Served, conversation: str, checkpoint_id: str, message: str | None = None
) -> list[dict[str, Any]]:
    body = {"checkpoint_id": checkpoint_id, "message": message, **QUIET}
    return await stream(served, f"/v1/conversations/{conversation}/branches/stream", body)


async def _turns(served: Served, conversation: str) -> list[dict[str, Any]]:
    response = await served.client.get(f"/v1/conversations/{conversation}/branches")
    assert response.status_code == 200, response.text
    turns: list[dict[str, Any]] = response.json()["turns"]
    return turns


async def _shown(served: Served, conversation: str) -> list[tuple[str, str | None, str]]:
    """Each exchange of the transcript: the message, its task, its answer."""
    response = await served.client.get(f"/v1/conversations/{conversation}/transcript")
    exchanges = response.json()["exchanges"]
    return [(e["message"], e["task_id"], e["messages"][-1]["content"]) for e in exchanges]


async def test_regenerate_edit_switch_and_the_agent_protocol_history(
    served: Served, llm: ScriptedLLM
) -> None:
    llm.script(reply("One."), reply("Two."))
    first = await _send(served, "b1", "one")
    second = await _send(served, "b1", "two")
    turns = await _turns(served, "b1")
    assert [(t["task_id"], t["index"], len(t["versions"])) for t in turns] == [
        (first[-1]["task_id"], 0, 1),
        (second[-1]["task_id"], 0, 1),
    ]

    # Regenerate the second answer: a new task on a new branch, shown as version 2 of 2.
    llm.script(reply("Two again."))
    again = await _fork(served, "b1", turns[1]["checkpoint_id"])
    assert again[-1]["status"] == "completed"
    turns = await _turns(served, "b1")
    assert [(t["index"], len(t["versions"])) for t in turns] == [(0, 1), (1, 2)]
    two_versions = [v["checkpoint_id"] for v in turns[1]["versions"]]
    two_fork = turns[1]["fork_point"]
    assert await _shown(served, "b1") == [
        ("one", first[-1]["task_id"], "One."),
        ("two", again[-1]["task_id"], "Two again."),
    ]

    # Back to the first version: it is the head again, with its own task's facts.
    switched = await served.client.post(
        "/v1/conversations/b1/branches/switch", json={"checkpoint_id": two_versions[0]}
    )
    assert switched.status_code == 200, switched.text
    assert await _shown(served, "b1") == [
        ("one", first[-1]["task_id"], "One."),
        ("two", second[-1]["task_id"], "Two."),
    ]
    assert [t["index"] for t in await _turns(served, "b1")] == [0, 0]

    # Edit the first message: the first turn forks too; the next message goes on from it.
    llm.script(reply("Uno."), reply("Tres."))
    edited = await _fork(served, "b1", turns[0]["checkpoint_id"], "uno")
    assert edited[-1]["answer"] == "Uno."
    await _send(served, "b1", "tres")
    assert [(m, a) for m, _, a in await _shown(served, "b1")] == [
        ("uno", "Uno."),
        ("tres", "Tres."),
    ]
    turns = await _turns(served, "b1")
    assert [(t["index"], len(t["versions"])) for t in turns] == [(1, 2), (0, 1)]

    # The Agent Protocol door sees the same checkpoints: every version's input checkpoint.
    history = await served.client.post(
        "/threads/b1/history", json={"limit": 1000, "metadata": {"source": "input"}}
    )
    assert history.status_code == 200, history.text
    inputs = {s["checkpoint"]["checkpoint_id"]: s for s in history.json()}
    versions = [v["checkpoint_id"] for t in turns for v in t["versions"]]
    assert set(versions + two_versions) <= inputs.keys()
    assert {_parent(inputs[v]) for v in two_versions} == {two_fork}
    root, uno = (v["checkpoint_id"] for v in turns[0]["versions"])
    assert (_parent(inputs[root]), _parent(inputs[uno])) == (None, root)

    # The first message's first version again: its own branch, not the edit under it.
    back = await served.client.post(
        "/v1/conversations/b1/branches/switch", json={"checkpoint_id": root}
    )
    assert back.status_code == 200, back.text
    assert [(m, a) for m, _, a in await _shown(served, "b1")] == [("one", "One."), ("two", "Two.")]


def _parent(state: dict[str, Any]) -> str | None:
    parent = state.get("parent_checkpoint") or {}
    return parent.get("checkpoint_id")


async def test_a_write_in_a_regenerated_turn_asks_again(
    served: Served, llm: ScriptedLLM, workspace: Path
) -> None:
    # Overwriting a file asks (a new file in the workspace would not: undo covers it).
    await asyncio.to_thread((workspace / "note.txt").write_text, "old")
    write = call("file_write", path="note.txt", content="hello", overwrite=True)
    llm.script(reply(tool_calls=[write]), reply("Written."))
    asked = await _send(served, "b2", "write the note")
    assert asked[-1]["status"] == "interrupted"
    question = next(e for e in asked if e["type"] == "approval_requested")
    body = {"decisions": [{"type": "approve"}], "interrupt_id": question["interrupt_id"]}
    done = await stream(served, f"/v1/tasks/{question['task_id']}/continue/stream", body)
    assert done[-1]["status"] == "completed"
    assert await asyncio.to_thread((workspace / "note.txt").read_text) == "hello"
    await asyncio.to_thread((workspace / "note.txt").write_text, "old")

    # The same write in the regenerated turn: asked again, nothing written before the answer.
    (turn,) = await _turns(served, "b2")
    llm.script(reply(tool_calls=[write]), reply("Written again."))
    regenerated = await _fork(served, "b2", turn["checkpoint_id"])
    assert regenerated[-1]["status"] == "interrupted"
    assert [e["type"] for e in regenerated].count("approval_requested") == 1
    assert await asyncio.to_thread((workspace / "note.txt").read_text) == "old"

    # While it waits, neither a switch nor another branch may move the conversation on.
    refused = await served.client.post(
        "/v1/conversations/b2/branches/switch", json={"checkpoint_id": turn["checkpoint_id"]}
    )
    assert refused.status_code == 409


async def test_unknown_checkpoints_and_conversations_are_refused(
    served: Served, llm: ScriptedLLM
) -> None:
    llm.script(reply("Hi."))
    await _send(served, "b3", "hi")
    bad = {"checkpoint_id": "no-such-checkpoint", **QUIET}
    forked = await served.client.post("/v1/conversations/b3/branches/stream", json=bad)
    assert forked.status_code == 404
    assert "no-such-checkpoint" in forked.json()["detail"]
    switched = await served.client.post(
        "/v1/conversations/b3/branches/switch", json={"checkpoint_id": "no-such-checkpoint"}
    )
    assert switched.status_code == 404
    missing = await served.client.get("/v1/conversations/nope/branches")
    assert missing.status_code == 404
