"""The Store API: items put, got, searched (by filter and query), deleted; namespaces."""

from __future__ import annotations

import uuid

from langgraph_sdk.client import LangGraphClient


async def test_put_get_delete(client: LangGraphClient) -> None:
    namespace = ["conformance", uuid.uuid4().hex]
    await client.store.put_item(namespace, "a", {"text": "ducks swim", "kind": "fact"})
    item = await client.store.get_item(namespace, "a")
    assert item["key"] == "a"
    assert item["namespace"] == namespace
    assert item["value"] == {"text": "ducks swim", "kind": "fact"}
    assert item["created_at"] and item["updated_at"]

    await client.store.put_item(namespace, "a", {"text": "ducks dive", "kind": "fact"})
    assert (await client.store.get_item(namespace, "a"))["value"]["text"] == "ducks dive"
    await client.store.delete_item(namespace, "a")
    assert await client.store.get_item(namespace, "a") is None  # 200 with null, not 404


async def test_search_by_filter_and_query(client: LangGraphClient) -> None:
    namespace = ["conformance", uuid.uuid4().hex]
    await client.store.put_item(namespace, "a", {"text": "ducks swim", "kind": "fact"})
    await client.store.put_item(namespace, "b", {"text": "geese honk", "kind": "other"})
    found = await client.store.search_items(namespace, filter={"kind": "fact"})
    assert [i["key"] for i in found["items"]] == ["a"]
    everything = await client.store.search_items(namespace, limit=10)
    assert sorted(i["key"] for i in everything["items"]) == ["a", "b"]
    paged = await client.store.search_items(namespace, limit=1, offset=1)
    assert len(paged["items"]) == 1
    queried = await client.store.search_items(namespace, query="which birds swim?")
    assert {i["key"] for i in queried["items"]} <= {"a", "b"}


async def test_namespaces_listed_by_prefix(client: LangGraphClient) -> None:
    tag = uuid.uuid4().hex
    await client.store.put_item(["conformance", tag, "x"], "k", {"n": 1})
    await client.store.put_item(["conformance", tag, "y"], "k", {"n": 2})
    listed = await client.store.list_namespaces(prefix=["conformance", tag])
    assert sorted(map(tuple, listed["namespaces"])) == [
        ("conformance", tag, "x"),
        ("conformance", tag, "y"),
    ]
    shallow = await client.store.list_namespaces(prefix=["conformance", tag], max_depth=2)
    assert [tuple(n) for n in shallow["namespaces"]] == [("conformance", tag)]


async def test_any_namespace_under_memories(client: LangGraphClient) -> None:
    """`("memories", <user_id>)`, as LangGraph's memory guides write it, is read back."""
    user = uuid.uuid4().hex
    namespace = ["memories", user]
    await client.store.put_item(namespace, "food", {"likes": "bread"})
    item = await client.store.get_item(namespace, "food")
    assert (item["namespace"], item["key"]) == (namespace, "food")
    assert item["value"] == {"likes": "bread"}
    found = await client.store.search_items(["memories", user])
    assert [i["key"] for i in found["items"]] == ["food"]
    await client.store.delete_item(namespace, "food")
    assert await client.store.get_item(namespace, "food") is None
