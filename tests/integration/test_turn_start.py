"""The turn's first superstep: route, context and recall as one task (`nodes/turn_start.py`)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from langchain_core.runnables import RunnableConfig

from ducklm.graph.state import DuckState
from ducklm.nodes import turn_start
from ducklm.runtime.facade import DuckLM
from tests.support.scripted_llm import ScriptedLLM, reply

QUIET = {"critic": False, "memory": False}


async def test_the_first_superstep_is_one_task_that_does_all_three(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    llm.script(reply("Hello."))
    result = await duck.run("hi", **QUIET)
    assert result.status == "completed"
    config: RunnableConfig = {"configurable": {"thread_id": result.thread_id}}
    history = [s async for s in duck.graph.aget_state_history(config)]
    first = next(s for s in history if s.metadata and s.metadata.get("step") == 0)
    assert [task.name for task in first.tasks] == ["context"]
    # route, context and recall each wrote their part of the state in that one task.
    state = await duck.state(result.thread_id)
    assert state is not None and state.route is not None  # route
    assert state.task == "hi" and state.step_limit > 0  # context
    assert [e["type"] for e in result.events].count("route_decided") == 1


def _runtime() -> Any:
    return cast(Any, None)  # the stand-in parts below read nothing from it


@pytest.fixture
def no_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    """No model servers to probe before the stand-in parts (they have no runtime)."""

    async def nothing_to_find(runtime: Any) -> None:
        return None

    monkeypatch.setattr(turn_start, "find_servers", nothing_to_find)


async def test_a_failing_part_raises_its_own_error_and_cancels_the_others(
    monkeypatch: pytest.MonkeyPatch, no_servers: None
) -> None:
    cancelled = asyncio.Event()

    async def slow(state: DuckState, runtime: Any) -> dict[str, Any]:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {}

    async def failing(state: DuckState, runtime: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        raise LookupError("workspace is gone")

    monkeypatch.setattr(turn_start, "PARTS", (slow, failing))
    # Not an ExceptionGroup: the runner words the node's own error for the person.
    with pytest.raises(LookupError, match="workspace is gone"):
        await turn_start.start_turn(DuckState(), _runtime())
    assert cancelled.is_set()


async def test_the_parts_run_concurrently_and_their_updates_merge(
    monkeypatch: pytest.MonkeyPatch, no_servers: None
) -> None:
    both_started = asyncio.Barrier(2)

    async def route(state: DuckState, runtime: Any) -> dict[str, Any]:
        await asyncio.wait_for(both_started.wait(), 5)  # only passes if the other runs too
        return {"step": 0}

    async def recall(state: DuckState, runtime: Any) -> dict[str, Any]:
        await asyncio.wait_for(both_started.wait(), 5)
        return {"recalled": []}

    monkeypatch.setattr(turn_start, "PARTS", (route, recall))
    assert await turn_start.start_turn(DuckState(), _runtime()) == {"step": 0, "recalled": []}


async def test_two_parts_writing_one_field_is_an_error(
    monkeypatch: pytest.MonkeyPatch, no_servers: None
) -> None:
    async def one(state: DuckState, runtime: Any) -> dict[str, Any]:
        return {"step": 1}

    monkeypatch.setattr(turn_start, "PARTS", (one, one))
    with pytest.raises(ValueError, match="step"):
        await turn_start.start_turn(DuckState(), _runtime())
