"""The Store API and DuckLM's memory are one store, over real HTTP on real parts.

DuckLM's server on a free loopback port (its SQLite, embedded Qdrant in tmp_path, the
MiniLM embedding model), driven by the official `langgraph-sdk` and plain httpx: an item
put through the Store API is found by `/v1/memory/search` and recalled in a turn; a
memory DuckLM's memory policy wrote after a turn is found by store search and get under
its scope's namespace; bad input is a `422` that says what was wrong.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk.client import LangGraphClient

from tests.support.scripted_llm import Reply, ScriptedLLM, reply
from tests.support.server import Served

WAIT_S = 120
ANA = "The user's sister Ana lives in Porto"


class Roles:
    """The action role answers "OK."; the memory policy stores what `keep` holds."""

    def __init__(self) -> None:
        self.keep: str | None = None

    def __call__(self, body: dict[str, Any]) -> Reply:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema == "MemoryProposal":
            fact = {"should_store": True, "text": self.keep, "scope": "global", "importance": 0.9}
            return reply(json.dumps(fact if self.keep else {"should_store": False}))
        if schema == "RecallPick":
            return reply(json.dumps({"relevant": [1]}))
        if schema == "Critique":
            return reply(json.dumps({"score": 0.8, "summary": "fine"}))
        return reply("OK.")


@pytest.fixture
def roles(llm: ScriptedLLM) -> Roles:
    script = Roles()
    llm.set_responder(script)
    return script


async def workspace_ns(workspace: Path) -> list[str]:
    """The namespace of the workspace's memories: its resolved path, `%` and `.` escaped."""
    label = str(await asyncio.to_thread(workspace.resolve))
    return ["memories", "workspace", label.replace("%", "%25").replace(".", "%2E")]


def prompt(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def embeddings_ready(served: Served) -> None:
    """Wait for the server's background load of the embedding model (recall needs it)."""
    async with asyncio.timeout(WAIT_S):
        # Polling /health over HTTP: there is no event to await.
        while (await served.client.get("/health")).json()["checks"]["embeddings"] != "ready":  # noqa: ASYNC110
            await asyncio.sleep(0.2)


async def test_an_item_put_through_the_store_is_a_ducklm_memory(
    client: LangGraphClient, served: Served, workspace: Path, roles: Roles
) -> None:
    namespace = await workspace_ns(workspace)
    value = {"text": "The duck pond is drained every March", "source": "studio"}
    await client.store.put_item(namespace, "pond", value)

    found = await served.client.get("/v1/memory/search", params={"q": "when is the pond drained?"})
    hits = found.json()["hits"]
    assert [(h["text"], h["scope"]) for h in hits] == [(value["text"], "workspace")]
    assert hits[0]["workspace"] == str(await asyncio.to_thread(workspace.resolve))
    assert hits[0]["metadata"]["langgraph_store"]["value"] == value

    item = await client.store.get_item(namespace, "pond")
    assert item is not None and item["value"] == value and item["namespace"] == namespace
    listed = await client.store.list_namespaces(prefix=["memories"])
    assert namespace in listed["namespaces"]

    await client.store.delete_item(namespace, "pond")
    gone = await served.client.get("/v1/memory/search", params={"q": "pond drained"})
    assert gone.json()["hits"] == []


async def test_a_store_item_is_recalled_in_a_turn(
    client: LangGraphClient, served: Served, llm: ScriptedLLM, roles: Roles
) -> None:
    await client.store.put_item(["memories", "global"], "ana", {"text": ANA})
    await embeddings_ready(served)

    done = await client.runs.wait(
        None, "ducklm", input=prompt("Which city is Ana's home?"), context={"critic": False}
    )
    assert isinstance(done, dict)
    assert [m["text"] for m in done["recalled"]] == [ANA]
    actions = [r["messages"][0]["content"] for r in llm.requests if "tools" in r]
    assert ANA in actions[-1]


async def test_a_memory_ducklm_wrote_is_a_store_item(
    client: LangGraphClient, served: Served, roles: Roles
) -> None:
    text = "The user keeps three ducks named Huey, Dewey and Louie"
    body = {"text": text, "scope": "global", "importance": 0.9}
    record = (await served.client.post("/v1/memory", json=body)).json()

    found = await client.store.search_items(["memories", "global"])
    (item,) = found["items"]
    assert (item["key"], item["namespace"]) == (record["id"], ["memories", "global"])
    assert item["value"] == {"text": text, "kind": "fact", "importance": 0.9}
    assert await client.store.get_item(["memories", "global"], record["id"]) == {
        k: v for k, v in item.items() if k != "score"
    }
    queried = await client.store.search_items(["memories"], query="what are the ducks called?")
    assert [i["key"] for i in queried["items"]] == [record["id"]]
    assert queried["items"][0]["score"] > 0

    # A put on its key changes that memory (DuckLM's search sees the new text).
    await client.store.put_item(["memories", "global"], record["id"], {"text": "Sam keeps geese"})
    hits = (await served.client.get("/v1/memory/search", params={"q": "geese"})).json()["hits"]
    assert [(h["id"], h["text"]) for h in hits] == [(record["id"], "Sam keeps geese")]


async def test_values_that_are_not_text_and_other_namespaces(
    client: LangGraphClient, served: Served, roles: Roles
) -> None:
    await client.store.put_item(["users", "42"], "prefs", {"theme": "dark", "size": 3})
    found = await client.store.search_items(["users"], filter={"size": {"$gte": 3}}, query="dark")
    assert [i["value"] for i in found["items"]] == [{"theme": "dark", "size": 3}]
    # Kept as a memory, never recalled: DuckLM's search of the workspace does not see it.
    seen = await served.client.get("/v1/memory/search", params={"q": "theme dark"})
    assert seen.json()["hits"] == []
    (memory,) = (await served.client.get("/v1/memory")).json()
    assert (memory["text"], memory["conversation_id"]) == ("theme: dark; size: 3", "store:users.42")

    # Under `memories` too, as LangGraph's memory guides write it: `("memories", user_id)`.
    await client.store.put_item(["memories", "42"], "food", {"likes": "bread"})
    item = await client.store.get_item(["memories", "42"], "food")
    assert (item["namespace"], item["value"]) == (["memories", "42"], {"likes": "bread"})


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"namespace": ["a.b"], "key": "k", "value": {}}, "without periods"),
        ({"namespace": [], "key": "k", "value": {}}, "at least one label"),
        ({"namespace": ["a"], "value": {}}, "key: Field required"),
        ({"namespace": ["a"], "key": "k", "value": [1]}, "value: Input should be a valid dict"),
        ({"namespace": ["memories", "workspace", "/etc"], "key": "k", "value": {}}, "/etc"),
    ],
)
async def test_bad_input_is_a_422_that_says_why(
    served: Served, body: dict[str, Any], said: str
) -> None:
    answer = await served.client.put("/store/items", json=body)
    assert answer.status_code == 422
    assert said in answer.json()["detail"]


async def test_bad_filters_and_namespaces_in_reads_are_422(served: Served) -> None:
    search = {"namespace_prefix": ["a"], "filter": {"n": {"$near": 1}}}
    answer = await served.client.post("/store/items/search", json=search)
    assert (answer.status_code, "$near" in answer.json()["detail"]) == (422, True)
    got = await served.client.get("/store/items", params={"namespace": "a..b", "key": "k"})
    assert (got.status_code, "non-empty" in got.json()["detail"]) == (422, True)
    missing = await served.client.get("/store/items", params={"namespace": "a"})
    assert (missing.status_code, "key" in missing.json()["detail"]) == (422, True)
