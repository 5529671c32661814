"""The read-mostly endpoints: conversations, tasks, learning, memory, models, status."""

from __future__ import annotations

import asyncio
import json

from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served

QUIET = {"critic": False, "memory": False}


async def test_conversation_lifecycle(served: Served, llm: ScriptedLLM) -> None:
    client = served.client
    created = (await client.post("/v1/conversations", json={"title": "Trip"})).json()
    llm.script(reply("Packed."))
    done = await client.post(
        "/v1/chat", json={"message": "pack", "conversation_id": created["id"], **QUIET}
    )
    assert done.json()["conversation_id"] == created["id"]
    shown = (await client.get(f"/v1/conversations/{created['id']}")).json()
    assert shown["title"] == "Trip"  # a chosen title is kept
    assert [(m["role"], m["content"]) for m in shown["messages"]] == [
        ("user", "pack"),
        ("assistant", "Packed."),
    ]
    renamed = await client.patch(f"/v1/conversations/{created['id']}", json={"title": "Lisbon"})
    assert renamed.json()["title"] == "Lisbon"
    tasks = (await client.get("/v1/tasks", params={"conversation_id": created["id"]})).json()
    assert [t["message"] for t in tasks] == ["pack"]
    events = (await client.get(f"/v1/tasks/{tasks[0]['task_id']}/events")).json()
    # tokens are not audited; what the answer cost and took is (model_usage, answer_facts)
    types = [
        "run_started",
        "route_decided",
        "model_usage",
        "action_decided",
        "answer_facts",
        "done",
    ]
    assert [e["type"] for e in events] == types
    assert (await client.delete(f"/v1/conversations/{created['id']}")).status_code == 204
    assert (await client.get(f"/v1/conversations/{created['id']}")).status_code == 404
    assert (await client.get(f"/v1/tasks/{tasks[0]['task_id']}")).status_code == 404
    assert (await client.get("/v1/tasks")).json() == []


async def test_memory_add_list_search_delete(served: Served) -> None:
    client = served.client
    added = await client.post(
        "/v1/memory", json={"text": "My sister Ana lives in Porto", "scope": "global"}
    )
    assert added.status_code == 201
    memory_id = added.json()["id"]
    await client.post("/v1/memory", json={"text": "The build uses make", "scope": "global"})
    listed = (await client.get("/v1/memory")).json()
    assert {m["text"] for m in listed} == {"My sister Ana lives in Porto", "The build uses make"}
    found = (await client.get("/v1/memory/search", params={"q": "where does Ana live"})).json()
    assert found["hits"][0]["id"] == memory_id
    assert found["degraded"] is False
    assert (await client.delete(f"/v1/memory/{memory_id}")).status_code == 204
    assert [m["text"] for m in (await client.get("/v1/memory")).json()] == ["The build uses make"]


async def test_skills_and_experience(served: Served, llm: ScriptedLLM) -> None:
    client = served.client
    skills = (await client.get("/v1/skills")).json()
    ids = {s["id"] for s in skills["skills"]}
    assert {"analyze_project", "fix_failing_test", "summarize_file", "tidy_workspace"} <= ids
    assert skills["problems"] == []
    one = (await client.get("/v1/skills/summarize_file")).json()
    assert one["procedure"]
    reflection = {
        "score": 0.7, "summary": "fine", "what_worked": ["short"], "what_failed": [],
        "reusable_lesson": "keep it short", "suggested_skill_patch": None, "confidence": 0.6,
    }  # fmt: skip
    llm.script(reply("Paris."), reply(json.dumps(reflection)))
    asked = await client.post("/v1/chat", json={"message": "capital of France?", "memory": False})
    # The critic runs behind the answer; the conversation's review state says when it ended.
    review = f"/v1/conversations/{asked.json()['conversation_id']}/review"
    while (await client.get(review)).json()["state"] != "idle":  # noqa: ASYNC110  polled over HTTP
        await asyncio.sleep(0.05)
    (record,) = (await client.get("/v1/experience")).json()
    assert record["lesson"] == "keep it short"


async def test_models_health_and_status(served: Served, llm: ScriptedLLM) -> None:
    client = served.client
    roles = (await client.get("/v1/models/roles")).json()
    assert {r["name"] for r in roles} >= {"action", "thinker", "critic", "memory_policy"}
    assert all("api_key" not in r for r in roles)
    (server,) = (await client.get("/v1/models/ping")).json()
    assert server["ok"] is True
    assert server["base_url"] == llm.base_url
    health = (await client.get("/health")).json()
    assert health["status"] == "ok"
    status = (await client.get("/v1/status")).json()
    assert status["running_tasks"] == []
    assert status["conversations"] == 0


async def test_health_says_what_is_missing_when_the_model_server_is_down(
    served: Served, llm: ScriptedLLM
) -> None:
    await asyncio.to_thread(llm.close)
    health = (await served.client.get("/health")).json()
    assert health["status"] == "degraded"
    (server,) = health["checks"]["model_servers"]
    assert server["ok"] is False
    assert "ducklm llama start" in server["fix"]
