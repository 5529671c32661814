"""Bad input gets a clear 4xx with a message for people, never a 500 or a traceback."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served

QUIET = {"critic": False, "memory": False}


def _clear(response: object, code: int, *words: str) -> None:
    status, body = response.status_code, response.json()  # type: ignore[attr-defined]
    assert status == code, (status, body)
    assert isinstance(body["detail"], str)
    assert "Traceback" not in body["detail"]
    for word in words:
        assert word in body["detail"], body["detail"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"message": ""}, ["message"]),
        ({"message": 42}, ["message"]),
        ({}, ["message", "Field required"]),
        ({"message": "hi", "critic": "maybe"}, ["critic"]),
        ({"message": "hi", "surprise": 1}, ["surprise"]),
        (["message"], ["body"]),
    ],
)
async def test_wrong_chat_bodies_are_422(served: Served, body: object, words: list[str]) -> None:
    _clear(await served.client.post("/v1/chat", json=body), 422, *words)


async def test_malformed_json_is_400(served: Served) -> None:
    response = await served.client.post(
        "/v1/chat", content=b'{"message": ', headers={"content-type": "application/json"}
    )
    _clear(response, 400, "not valid JSON")


async def test_unknown_ids_are_404(served: Served) -> None:
    client = served.client
    _clear(await client.get("/v1/tasks/nope"), 404, "nope")
    _clear(await client.get("/v1/tasks/nope/events"), 404)
    _clear(await client.post("/v1/tasks/nope/cancel"), 404)
    _clear(
        await client.post(
            "/v1/tasks/nope/continue/stream", json={"decisions": [{"type": "approve"}]}
        ),
        404,
    )
    _clear(await client.get("/v1/conversations/nope"), 404, "nope")
    _clear(await client.patch("/v1/conversations/nope", json={"title": "x"}), 404)
    _clear(await client.delete("/v1/conversations/nope"), 404)
    _clear(await client.get("/v1/skills/nope"), 404)
    _clear(await client.delete("/v1/memory/nope"), 404)
    _clear(await client.post("/v1/approvals/nope/allow_once"), 404)
    _clear(await client.post("/v1/approvals/x/sometimes"), 422)


async def test_resuming_a_task_that_does_not_wait_is_409(served: Served, llm: ScriptedLLM) -> None:
    llm.script(reply("Done."))
    done = (await served.client.post("/v1/chat", json={"message": "hi", **QUIET})).json()
    path = f"/v1/tasks/{done['task_id']}"
    decisions = {"decisions": [{"type": "approve"}]}
    _clear(await served.client.post(f"{path}/continue/stream", json=decisions), 409, "not waiting")
    _clear(await served.client.post(f"{path}/password/stream", json={"password": "x"}), 409)
    _clear(await served.client.post(f"{path}/cancel"), 409, "already ended")


async def test_decisions_that_do_not_answer_the_question_are_refused(
    served: Served, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "b.txt").write_text, "old")
    llm.script(reply(tool_calls=[call("file_write", path="b.txt", content="x", overwrite=True)]))
    first = (await served.client.post("/v1/chat", json={"message": "go", **QUIET})).json()
    asked = first["pending"][0]
    path = f"/v1/tasks/{first['task_id']}/continue/stream"
    two = {"decisions": [{"type": "approve"}, {"type": "approve"}]}
    _clear(await served.client.post(path, json=two), 422, "decision")
    other = {"decisions": [{"type": "approve"}], "interrupt_id": "another-question"}
    _clear(await served.client.post(path, json=other), 409, "another-question")
    unknown = {"decisions": [{"type": "perhaps"}]}
    _clear(await served.client.post(path, json=unknown), 422)
    # Still waiting, nothing lost: the right answer still works.
    llm.script(reply("Rejected, fine."))
    ok = {"decisions": [{"type": "reject"}], "interrupt_id": asked["interrupt_id"]}
    async with served.client.stream("POST", path, json=ok) as response:
        assert response.status_code == 200
        await response.aread()
    task = (await served.client.get(f"/v1/tasks/{first['task_id']}")).json()
    assert task["status"] == "completed"


async def test_password_body_must_choose(served: Served) -> None:
    _clear(await served.client.post("/v1/tasks/x/password/stream", json={}), 422, "either")
    both = {"password": "p", "cancel": True}
    _clear(await served.client.post("/v1/tasks/x/password/stream", json=both), 422)


async def test_memory_and_conversation_bodies(served: Served) -> None:
    client = served.client
    _clear(await client.post("/v1/memory", json={"text": "x", "importance": 2}), 422, "importance")
    _clear(await client.post("/v1/memory", json={"text": "x", "scope": "cosmic"}), 422, "scope")
    _clear(await client.post("/v1/memory", json={"text": "x", "scope": "conversation"}), 422)
    _clear(await client.get("/v1/memory/search"), 422, "q")
    created = await client.post("/v1/conversations", json={"title": "Plans"})
    assert created.status_code == 201
    _clear(await client.patch(f"/v1/conversations/{created.json()['id']}", json={"title": ""}), 422)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", "/v1/approvals/rules/99999999999999999999999"),  # SQLite overflow: was a 500
        ("DELETE", "/v1/approvals/rules/0"),
        ("GET", "/v1/tasks/x/events?after=99999999999999999999999"),
        ("GET", f"/v1/tasks/{'x' * 201}"),
        ("GET", "/v1/tasks?limit=1&limit=2"),  # which one counts would be a guess
        ("GET", "/v1/tasks?limt=2"),  # a typo is an error, as in bodies
        ("POST", "/threads/search?x=1&x=2"),
    ],
)
async def test_out_of_range_ids_and_repeated_parameters_are_422(
    served: Served, method: str, path: str
) -> None:
    _clear(await served.client.request(method, path, json={}), 422)


async def test_an_unknown_rule_is_404(served: Served) -> None:
    _clear(await served.client.delete(f"/v1/approvals/rules/{2**63 - 1}"), 404, "rule")
