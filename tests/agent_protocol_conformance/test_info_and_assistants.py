"""`/info` and the assistants: search, get, and (where served) create, update, versions."""

from __future__ import annotations

import uuid

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError

from .server_under_test import Target

ASSISTANT_KEYS = {"assistant_id", "graph_id", "config", "metadata", "created_at", "updated_at"}


async def test_info_says_what_the_server_is(http: httpx.AsyncClient) -> None:
    response = await http.get("/info")
    assert response.status_code == 200
    info = response.json()
    assert isinstance(info, dict)
    assert isinstance(info.get("flags", {}), dict)


async def test_assistants_search_finds_the_graph(client: LangGraphClient, target: Target) -> None:
    found = await client.assistants.search(graph_id=target.assistant)
    assert found, f"no assistant for graph {target.assistant}"
    for assistant in found:
        assert set(assistant) >= ASSISTANT_KEYS
        assert assistant["graph_id"] == target.assistant
        uuid.UUID(assistant["assistant_id"])
    assert len(await client.assistants.search(limit=1)) == 1


async def test_search_by_an_unknown_graph_is_404(client: LangGraphClient) -> None:
    with pytest.raises(NotFoundError):
        await client.assistants.search(graph_id=f"no-such-graph-{uuid.uuid4().hex}")


async def test_assistant_get_by_id(client: LangGraphClient, target: Target) -> None:
    [first, *_] = await client.assistants.search(graph_id=target.assistant)
    got = await client.assistants.get(first["assistant_id"])
    assert got["assistant_id"] == first["assistant_id"]
    assert got["graph_id"] == target.assistant


async def test_unknown_assistant_is_404(client: LangGraphClient, http: httpx.AsyncClient) -> None:
    unknown = str(uuid.uuid4())
    with pytest.raises(NotFoundError):
        await client.assistants.get(unknown)
    response = await http.get(f"/assistants/{unknown}")
    assert response.status_code == 404
    assert isinstance(response.json()["detail"], str)


async def test_assistant_graph_and_schemas(client: LangGraphClient, target: Target) -> None:
    [first, *_] = await client.assistants.search(graph_id=target.assistant)
    graph = await client.assistants.get_graph(first["assistant_id"])
    assert {"nodes", "edges"} <= set(graph)
    schemas = await client.assistants.get_schemas(first["assistant_id"])
    assert schemas["graph_id"] == target.assistant
    assert isinstance(schemas["state_schema"], dict)


async def test_assistants_create_update_versions_delete(
    client: LangGraphClient, target: Target
) -> None:
    tag = uuid.uuid4().hex
    made = await client.assistants.create(
        target.assistant, name=f"conformance {tag}", metadata={"suite": tag}
    )
    assistant_id = made["assistant_id"]
    assert made["graph_id"] == target.assistant
    assert made["version"] == 1
    updated = await client.assistants.update(assistant_id, metadata={"suite": tag, "step": 2})
    assert updated["version"] == 2
    assert updated["metadata"]["step"] == 2
    versions = await client.assistants.get_versions(assistant_id)
    assert sorted(v["version"] for v in versions) == [1, 2]
    back = await client.assistants.set_latest(assistant_id, 1)
    assert back["version"] == 1
    assert [a["assistant_id"] for a in await client.assistants.search(metadata={"suite": tag})] == [
        assistant_id
    ]
    await client.assistants.delete(assistant_id)
    with pytest.raises(NotFoundError):
        await client.assistants.get(assistant_id)
