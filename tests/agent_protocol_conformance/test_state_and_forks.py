"""Thread state: latest, at a checkpoint, history, updates, and forks from a checkpoint."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError

from .server_under_test import Target
from .streams import hello, last_ai_text, new_thread, prompt, run_options

NOTE = {"messages": [{"type": "human", "content": "a note"}]}


def _texts(values: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in values.get("messages", [])]


async def _two_turns(client: LangGraphClient, target: Target) -> tuple[str, list[dict[str, Any]]]:
    """A thread of two answered turns, and its history (newest first)."""
    thread_id = await new_thread(client)
    for _ in range(2):
        await client.runs.wait(thread_id, target.assistant, input=hello(), **run_options(target))
    return thread_id, list(await client.threads.get_history(thread_id, limit=1000))


def _end_of_first_turn(history: list[dict[str, Any]]) -> dict[str, Any]:
    """The newest checkpoint that holds exactly the first turn (one human, one answer)."""
    for state in history:
        types = [m["type"] for m in state["values"].get("messages", [])]
        if types == ["human", "ai"] and not state["next"]:
            return state
    raise AssertionError("no checkpoint ends the first turn")


async def test_a_new_thread_has_an_empty_state(client: LangGraphClient) -> None:
    thread_id = await new_thread(client)
    state = await client.threads.get_state(thread_id)
    assert not state["values"]
    assert state["next"] == []
    assert await client.threads.get_history(thread_id) == []


async def test_state_history_checkpoints_and_updates(
    client: LangGraphClient, target: Target
) -> None:
    thread_id, history = await _two_turns(client, target)
    latest = await client.threads.get_state(thread_id)
    assert [m["type"] for m in latest["values"]["messages"]] == ["human", "ai", "human", "ai"]
    assert latest["checkpoint"]["thread_id"] == thread_id
    assert latest["checkpoint"]["checkpoint_id"]

    # History: newest first, each state's parent the next one.
    assert history[0]["checkpoint"]["checkpoint_id"] == latest["checkpoint"]["checkpoint_id"]
    assert history[-1]["parent_checkpoint"] is None
    for newer, older in itertools.pairwise(history):
        assert newer["parent_checkpoint"]["checkpoint_id"] == older["checkpoint"]["checkpoint_id"]
    assert len(await client.threads.get_history(thread_id, limit=2)) == 2

    # The state at a checkpoint, by its id.
    first = _end_of_first_turn(history)
    checkpoint_id = first["checkpoint"]["checkpoint_id"]
    at = await client.threads.get_state(thread_id, checkpoint_id=checkpoint_id)
    assert at["checkpoint"]["checkpoint_id"] == checkpoint_id
    assert _texts(at["values"]) == _texts(first["values"])

    # An update is a new checkpoint on top of the latest.
    written = await client.threads.update_state(thread_id, NOTE)
    assert written["checkpoint"]["thread_id"] == thread_id
    after = await client.threads.get_state(thread_id)
    assert after["checkpoint"]["checkpoint_id"] == written["checkpoint"]["checkpoint_id"]
    assert after["parent_checkpoint"]["checkpoint_id"] == latest["checkpoint"]["checkpoint_id"]
    assert _texts(after["values"]) == [*_texts(latest["values"]), "a note"]


async def test_state_at_a_checkpoint_given_whole(client: LangGraphClient, target: Target) -> None:
    thread_id = await new_thread(client)
    await client.runs.wait(thread_id, target.assistant, input=hello(), **run_options(target))
    older = (await client.threads.get_history(thread_id, limit=2))[1]
    at = await client.threads.get_state(thread_id, checkpoint=older["checkpoint"])
    assert at["checkpoint"]["checkpoint_id"] == older["checkpoint"]["checkpoint_id"]


@pytest.mark.missing_on(
    "reference",
    "langgraph dev answers 500 to /history with `before` as the SDK sends it (a "
    "Checkpoint): it hands it to the checkpointer as a config (KeyError 'configurable')",
)
async def test_history_before_a_checkpoint(client: LangGraphClient, target: Target) -> None:
    thread_id = await new_thread(client)
    await client.runs.wait(thread_id, target.assistant, input=hello(), **run_options(target))
    history = await client.threads.get_history(thread_id, limit=3)
    before = await client.threads.get_history(thread_id, before=history[0]["checkpoint"], limit=1)
    assert before[0]["checkpoint"]["checkpoint_id"] == history[1]["checkpoint"]["checkpoint_id"]


async def test_forks_from_an_earlier_checkpoint(client: LangGraphClient, target: Target) -> None:
    thread_id, history = await _two_turns(client, target)
    first = _end_of_first_turn(history)
    first_id = first["checkpoint"]["checkpoint_id"]

    # By an update at the checkpoint: a branch whose parent is that checkpoint.
    written = await client.threads.update_state(thread_id, NOTE, checkpoint_id=first_id)
    branch = await client.threads.get_state(thread_id)
    assert branch["checkpoint"]["checkpoint_id"] == written["checkpoint"]["checkpoint_id"]
    assert branch["parent_checkpoint"]["checkpoint_id"] == first_id
    assert _texts(branch["values"]) == [*_texts(first["values"]), "a note"]

    # By a run from the checkpoint: the second turn is not in the fork.
    done = await client.runs.wait(
        thread_id,
        target.assistant,
        input=prompt("hello fork"),
        checkpoint_id=first_id,
        **run_options(target),
    )
    assert isinstance(done, dict)
    assert _texts(done) == [*_texts(first["values"]), "hello fork", "Hello back: hello fork"]
    latest = await client.threads.get_state(thread_id)
    assert last_ai_text(latest["values"]) == "Hello back: hello fork"
    lineage = {
        s["checkpoint"]["checkpoint_id"]: s
        for s in await client.threads.get_history(thread_id, limit=1000)
    }
    ancestors = []
    node = latest
    while node["parent_checkpoint"] is not None:
        ancestors.append(node["parent_checkpoint"]["checkpoint_id"])
        node = lineage[ancestors[-1]]
    assert first_id in ancestors, "the fork hangs off the checkpoint it started from"


async def test_unknown_thread_state_is_404(client: LangGraphClient) -> None:
    unknown = "00000000-0000-4000-8000-000000000000"
    with pytest.raises(NotFoundError):
        await client.threads.get_state(unknown)
    with pytest.raises(NotFoundError):
        await client.threads.get_history(unknown)
    with pytest.raises(NotFoundError):
        await client.threads.update_state(unknown, NOTE)


def _reviewed(target: Target) -> dict[str, Any]:
    """The run options with the target's critic on, where its context has that switch."""
    options = run_options(target)
    context = options.get("context")
    if isinstance(context, dict) and "critic" in context:
        options["context"] = {**context, "critic": True}
    return options


async def test_an_update_right_after_a_run_stands_and_the_thread_rests(
    client: LangGraphClient, target: Target
) -> None:
    """An update written as a run ends is never written past (by anything the server does
    behind the run, as DuckLM's review of the answer), and the thread stays at rest."""
    thread_id = await new_thread(client)
    notes = []
    for n in range(4):
        question = prompt(f"Explain what duck {n} is.")
        await client.runs.wait(thread_id, target.assistant, input=question, **_reviewed(target))
        note = {"messages": [{"type": "human", "content": f"note {n}"}]}
        written = await client.threads.update_state(thread_id, note)
        notes.append(f"note {n}")
        state = await client.threads.get_state(thread_id)
        assert state["checkpoint"]["checkpoint_id"] == written["checkpoint"]["checkpoint_id"]
        assert (state["next"], state["interrupts"]) == ([], [])
        assert (await client.threads.get(thread_id))["status"] == "idle"
    # One more run: whatever was behind the last one has ended or made way for it.
    await client.runs.wait(thread_id, target.assistant, input=hello(), **run_options(target))
    texts = _texts((await client.threads.get_state(thread_id))["values"])
    assert [t for t in texts if t.startswith("note ")] == notes, "no update was lost"


async def test_history_before_a_checkpoint_as_a_config(
    client: LangGraphClient, target: Target
) -> None:
    """`before` as LangGraph's server takes it: `{"configurable": {"checkpoint_id": ...}}`."""
    thread_id = await new_thread(client)
    await client.runs.wait(thread_id, target.assistant, input=hello(), **run_options(target))
    history = await client.threads.get_history(thread_id, limit=1000)
    middle = history[len(history) // 2]["checkpoint"]["checkpoint_id"]
    before: Any = {"configurable": {"checkpoint_id": middle}}  # the SDK types a Checkpoint
    older = await client.threads.get_history(thread_id, before=before, limit=1000)
    ids = [s["checkpoint"]["checkpoint_id"] for s in history]
    assert [s["checkpoint"]["checkpoint_id"] for s in older] == ids[ids.index(middle) + 1 :]
