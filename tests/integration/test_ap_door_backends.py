"""The Agent Protocol door's tables and a thread copy, on SQLite and on PostgreSQL.

Assistants are stored in DuckLM's database with every version; a copied thread gets the
source's checkpoints row for row, so its messages (a delta channel rebuilt from parent
writes, snapshotted every hundred updates) read back whole, and it goes on by itself.
"""

from __future__ import annotations

import time

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from ducklm.stores.agent_protocol.assistants import AssistantStore, AssistantVersion
from ducklm.stores.agent_protocol.thread_ttl import TtlStore
from tests.support.postgres import on_backend
from tests.support.scripted_llm import ScriptedLLM, reply

QUIET = {"critic": False, "memory": False}


@pytest.fixture
def settings(settings: Settings, database_url: str | None) -> Settings:
    """Every test here on SQLite, then on PostgreSQL."""
    return on_backend(settings, database_url)


def first_version(assistant_id: str) -> AssistantVersion:
    return AssistantVersion(
        assistant_id=assistant_id,
        version=1,
        graph_id="ducklm",
        name="first",
        description=None,
        config={"configurable": {"critic": False}},
        context={"critic": False},
        metadata={"team": "a"},
        created_at=time.time(),
    )


async def test_assistants_keep_every_version(duck: DuckLM) -> None:
    store = await AssistantStore.open(duck.database)
    assert await store.create(first_version("a1"))
    assert not await store.create(first_version("a1")), "the id is taken"
    second = await store.add_version("a1", {"name": "second", "metadata": {"team": "b"}})
    assert second is not None
    assert (second.current.version, second.current.name) == (2, "second")
    assert second.current.context == {"critic": False}, "unchanged fields carry over"
    assert [v.version for v in await store.versions("a1")] == [2, 1]

    assert await store.set_latest("a1", 1)
    back = await store.get("a1")
    assert back is not None
    assert (back.current.version, back.current.name, back.current.metadata) == (
        1,
        "first",
        {"team": "a"},
    )
    assert not await store.set_latest("a1", 7)
    third = await store.add_version("a1", {"name": "third"})
    assert third is not None
    assert third.current.version == 3, "a new version follows the newest, not the current"
    assert await store.add_version("nobody", {"name": "x"}) is None
    assert await store.delete("a1")
    assert await store.get("a1") is None
    assert await store.versions("a1") == []


async def test_ttls_are_stored_and_replaced(duck: DuckLM) -> None:
    store = await TtlStore.open(duck.database)
    await store.set("t1", "delete", 5)
    await store.set("t1", "delete", 10)
    found = await store.get("t1")
    assert found is not None
    assert found.minutes == 10
    assert found.expires_at(found.set_at - 100) == found.set_at + 600
    assert found.expires_at(found.set_at + 100) == found.set_at + 700, "activity pushes it"
    await store.delete("t1")
    assert await store.all() == {}


async def test_a_copy_has_every_message_and_goes_on_alone(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.script(*(reply(f"answer {n}") for n in range(3)))
    for n in range(2):
        await duck.run(f"turn {n}", thread_id="source", **QUIET)
    assert await duck.copy_thread("source", "copy")
    assert not await duck.copy_thread("nowhere", "copy2")
    before = [m.text for m in await duck.messages("source")]
    assert [m.text for m in await duck.messages("copy")] == before
    source_history = [s.config for s in await duck.states.history("source", limit=100)]
    copy_history = [s.config for s in await duck.states.history("copy", limit=100)]
    assert [c["configurable"]["checkpoint_id"] for c in copy_history] == [
        c["configurable"]["checkpoint_id"] for c in source_history
    ]
    conversation = await duck.conversations.get("copy")
    assert conversation is not None
    assert conversation.title == "turn 0"
    assert await duck.tasks("copy") == [], "the audit stays with the source"

    await duck.run("turn 2", thread_id="copy", **QUIET)
    assert [m.text for m in await duck.messages("copy")] == [*before, "turn 2", "answer 2"]
    assert [m.text for m in await duck.messages("source")] == before
