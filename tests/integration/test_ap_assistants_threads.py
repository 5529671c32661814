"""Assistants as DuckLM configurations, thread copies and thread TTLs, over real HTTP.

DuckLM's real server on a free port with its scripted model, driven by the official
`langgraph-sdk`: an assistant's workspace and recursion limit reach the run, its
versions outlive a restart (they are in DuckLM's database), a copy has the whole history
and goes its own way, a thread past its TTL is swept while others stay.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError

from ducklm.config.settings import Settings
from ducklm.server.agent_protocol.common.deps import Door
from ducklm.server.agent_protocol.threads.retention import sweep_expired
from tests.support.agent_runs import QUIET, human_texts, new_thread, prompt
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served, sdk_client, serve


@pytest.fixture
def other_workspace(tmp_path: Path) -> Path:
    path = tmp_path / "other"
    path.mkdir()
    return path


@pytest.fixture
def server_settings(settings: Settings, other_workspace: Path) -> Settings:
    """The server allows a second workspace, for an assistant to choose."""
    return settings.model_copy(update={"workspaces": [other_workspace]})


async def test_a_run_takes_the_assistants_workspace_and_its_id(
    client: LangGraphClient, llm: ScriptedLLM, other_workspace: Path
) -> None:
    made = await client.assistants.create(
        "ducklm", name="elsewhere", context={**QUIET, "workspace": str(other_workspace)}
    )
    assert made["config"]["configurable"] == made["context"], "kept equal, as LangGraph does"
    thread_id = await new_thread(client)
    llm.script(reply("There."))
    values = await client.runs.wait(thread_id, made["assistant_id"], input=prompt())
    assert isinstance(values, dict)
    assert values["workspace"] == str(other_workspace)
    thread = await client.threads.get(thread_id)
    assert thread["metadata"]["assistant_id"] == made["assistant_id"]
    # A request's own value wins over the assistant's.
    llm.script(reply("Here."))
    mine = await client.runs.wait(
        await new_thread(client), made["assistant_id"], input={**prompt(), "workspace": ""}
    )
    assert isinstance(mine, dict)
    assert mine["workspace"] != str(other_workspace)


async def test_a_run_takes_the_assistants_recursion_limit(
    client: LangGraphClient, llm: ScriptedLLM, caplog: pytest.LogCaptureFixture
) -> None:
    made = await client.assistants.create("ducklm", config={"recursion_limit": 1}, context=QUIET)
    llm.script(reply("Never said."), reply("Said."))
    thread_id = await new_thread(client)
    values = await client.runs.wait(
        thread_id, made["assistant_id"], input=prompt(), raise_error=False
    )
    assert isinstance(values, dict)
    assert values["__error__"]["error"] == "RunFailed"
    assert "Recursion limit of 1 reached" in caplog.text
    # The same run under the graph's own assistant (no limit of its own) ends well.
    done = await client.runs.wait(await new_thread(client), "ducklm", input=prompt(), context=QUIET)
    assert isinstance(done, dict)
    assert "__error__" not in done


async def test_deleting_an_assistant_can_take_its_threads(
    client: LangGraphClient, llm: ScriptedLLM
) -> None:
    made = await client.assistants.create("ducklm", context=QUIET)
    used = await new_thread(client)
    other = await new_thread(client)
    llm.script(reply("Used."))
    await client.runs.wait(used, made["assistant_id"], input=prompt())
    await client.assistants.delete(made["assistant_id"], delete_threads=True)
    with pytest.raises(NotFoundError):
        await client.threads.get(used)
    assert (await client.threads.get(other))["thread_id"] == other
    with pytest.raises(NotFoundError):
        await client.assistants.get(made["assistant_id"])
    with pytest.raises(httpx.HTTPStatusError) as refused:  # runs.wait raises httpx's own
        await client.runs.wait(other, made["assistant_id"], input=prompt())
    assert refused.value.response.status_code == 404


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"context": {"critic": "yes"}}, 422, "context.critic"),
        ({"config": {"recursion_limit": 0}}, 422, "config.recursion_limit"),
        ({"context": {"workspace": "/"}}, 422, "workspace"),
        ({"config": {"configurable": {"a": 1}}, "context": {"b": 2}}, 400, "both"),
        ({"graph_id": "someone-else"}, 404, "someone-else"),
    ],
    ids=["wrong-type", "bad-limit", "workspace-not-allowed", "both", "unknown-graph"],
)
async def test_a_bad_assistant_is_refused_saying_why(
    served: Served, body: dict[str, object], status: int, says: str
) -> None:
    response = await served.client.post("/assistants", json={"graph_id": "ducklm", **body})
    assert response.status_code == status
    assert says in response.json()["detail"]


async def test_the_graphs_own_assistant_cannot_change(served: Served) -> None:
    for method, path in (("PATCH", "/assistants/ducklm"), ("DELETE", "/assistants/ducklm")):
        response = await served.client.request(method, path, json={"name": "x"})
        assert response.status_code == 409
        assert "cannot be changed" in response.json()["detail"]
    assert (await served.client.get("/assistants/ducklm/graph?xray=0")).status_code == 422


async def test_assistants_and_their_versions_outlive_a_restart(
    server_settings: Settings,
) -> None:
    async with serve(server_settings) as first, sdk_client(first) as sdk:
        made = await sdk.assistants.create("ducklm", name="kept", metadata={"v": 1})
        await sdk.assistants.update(made["assistant_id"], name="renamed", metadata={"v": 2})
    async with serve(server_settings) as second, sdk_client(second) as sdk:
        now = await sdk.assistants.get(made["assistant_id"])
        assert (now["name"], now["version"], now["metadata"]) == ("renamed", 2, {"v": 2})
        versions = await sdk.assistants.get_versions(made["assistant_id"])
        assert [(v["version"], v["name"]) for v in versions] == [(2, "renamed"), (1, "kept")]
        assert await sdk.assistants.count(metadata={"v": 2}) == 1


async def test_a_copy_has_the_whole_history_and_goes_its_own_way(
    client: LangGraphClient, served: Served, llm: ScriptedLLM
) -> None:
    thread_id = (await client.threads.create(metadata={"owner": "ada"}))["thread_id"]
    llm.script(reply("One."), reply("Two."))
    for text in ("first", "second"):
        await client.runs.wait(thread_id, "ducklm", input=prompt(text), context=QUIET)
    copy = await client.threads.copy(thread_id)
    assert copy["metadata"]["owner"] == "ada"
    assert copy["values"] == (await client.threads.get(thread_id))["values"]
    original_history = await client.threads.get_history(thread_id, limit=100)
    copied_history = await client.threads.get_history(copy["thread_id"], limit=100)
    assert [s["checkpoint"]["checkpoint_id"] for s in copied_history] == [
        s["checkpoint"]["checkpoint_id"] for s in original_history
    ]
    listed = (await served.client.get("/v1/conversations")).json()
    titles = {c["id"]: c["title"] for c in listed}
    assert titles[copy["thread_id"]] == titles[thread_id] == "first"

    llm.script(reply("Three."))
    await client.runs.wait(copy["thread_id"], "ducklm", input=prompt("third"), context=QUIET)
    assert human_texts(await _values(client, copy["thread_id"])) == ["first", "second", "third"]
    assert human_texts(await _values(client, thread_id)) == ["first", "second"]
    with pytest.raises(NotFoundError):
        await client.threads.copy("00000000-0000-4000-8000-000000000000")


async def test_count_uses_the_search_filters(client: LangGraphClient) -> None:
    tag = str(time.time())
    for _ in range(3):
        await client.threads.create(metadata={"count": tag})
    assert await client.threads.count(metadata={"count": tag}) == 3
    assert await client.threads.count(metadata={"count": tag}, status="interrupted") == 0


async def test_a_thread_past_its_ttl_is_swept_and_others_stay(
    client: LangGraphClient, served: Served
) -> None:
    doomed = await client.threads.create(ttl=0.001)  # 60 ms
    kept = await client.threads.create(ttl=60)
    plain = await client.threads.create()
    shown = (await served.client.get(f"/threads/{doomed['thread_id']}?include=ttl")).json()
    assert (shown["ttl"]["strategy"], shown["ttl"]["ttl_minutes"]) == ("delete", 0.001)
    assert "ttl" not in (await client.threads.get(plain["thread_id"]))

    door: Door = served.server.config.app.state.agent_protocol  # type: ignore[attr-defined]
    state = served.server.config.app.state  # type: ignore[attr-defined]
    await asyncio.sleep(0.1)
    swept = await sweep_expired(duck=state.duck, door=door, hub=state.hub)
    assert swept == [doomed["thread_id"]]
    with pytest.raises(NotFoundError):
        await client.threads.get(doomed["thread_id"])
    for thread in (kept, plain):
        assert (await client.threads.get(thread["thread_id"]))["thread_id"] == thread["thread_id"]
    # An update sets a new TTL, counted from now.
    await client.threads.update(plain["thread_id"], metadata={}, ttl=0.001)
    await asyncio.sleep(0.1)
    assert await sweep_expired(duck=state.duck, door=door, hub=state.hub) == [plain["thread_id"]]


async def test_keep_latest_is_refused(served: Served) -> None:
    body = {"ttl": {"ttl": 5, "strategy": "keep_latest"}}
    response = await served.client.post("/threads", json=body)
    assert response.status_code == 422
    assert "keep_latest" in response.json()["detail"]
    bad = await served.client.post("/threads", json={"ttl": {"ttl": 0}})
    assert bad.status_code == 422


async def _values(client: LangGraphClient, thread_id: str) -> dict[str, object]:
    state = await client.threads.get_state(thread_id)
    values = state["values"]
    assert isinstance(values, dict)
    return values
