"""Rule shortcuts through the graph: the call runs without the action model; its result is
the answer, or the thinker answers from it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from tests.support.scripted_llm import ScriptedLLM, reply

MODELS = """
defaults: {{base_url: {url}, model: scripted, api_key: test}}
roles:
  action: {{tool_mode: {mode}, structured_output: json_object_schema}}
"""


async def _open(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path, mode: str, *, selector: bool = True
) -> DuckLM:
    models = tmp_path / f"models-{mode}.yaml"
    await asyncio.to_thread(models.write_text, MODELS.format(url=llm.base_url, mode=mode))
    update = {"models_config": models, "tool_selector": selector}
    return DuckLM.open(settings.model_copy(update=update))  # type: ignore[return-value]


@pytest.fixture
async def duck(settings: Settings, llm: ScriptedLLM, tmp_path: Path) -> AsyncIterator[DuckLM]:
    async with await _open(settings, llm, tmp_path, "json") as runtime:
        yield runtime


async def test_a_certain_request_runs_its_call_and_the_thinker_answers(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "notes.md").write_text, "one duck\ntwo ducks\n")
    result = await duck.run("What is in notes.md?", critic=False, memory=False)

    assert result.status == "completed"
    # The file's text is the answer: no model call at all.
    assert result.answer == "`notes.md`:\n\n```\none duck\ntwo ducks\n```"
    assert llm.requests == []
    (route,) = [e for e in result.events if e["type"] == "route_decided"]
    assert route["shortcut"]["tool"] == "file_read"
    assert "what is in a file" in route["shortcut"]["reason"]
    (decided,) = [e for e in result.events if e["type"] == "action_decided"]
    assert decided["shortcut"] is True and decided["calls"][0]["args"] == {"path": "notes.md"}
    finished = next(e for e in result.events if e["type"] == "tool_call_finished")
    assert finished["status"] == "success" and "two ducks" in finished["output"]


async def test_a_failed_shortcut_call_is_answered_by_the_thinker_from_its_result(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    llm.script(reply("There is no notes.md."))
    result = await duck.run("What is in notes.md?", critic=False, memory=False)
    assert result.answer == "There is no notes.md."
    # One model call in all: the thinker's, which saw the error.
    (request,) = llm.requests
    assert "response_format" not in request
    last = request["messages"][-1]
    assert last["role"] == "user" and last["content"].startswith("What is in notes.md?")
    assert not any("[calling tools" in m["content"] for m in request["messages"])


async def test_a_write_by_shortcut_still_passes_the_policy(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "todo.txt").write_text, "old\n")
    paused = await duck.run(
        "Create a file called todo.txt containing 'buy milk'.",
        thread_id="w",
        critic=False,
        memory=False,
    )
    # The file exists: the person is asked, with the change, before anything is written.
    assert paused.status == "interrupted"
    (action,) = paused.pending[0]["request"]["action_requests"]
    assert action["description"].startswith("overwrite existing file todo.txt:\n--- a/todo.txt")
    assert "-old\n" in action["description"]
    llm.script(reply("I left todo.txt as it was."))
    result = await duck.resume_run("w", [{"type": "reject"}], critic=False, memory=False)
    assert result.status == "completed"
    finished = next(e for e in result.events if e["type"] == "tool_call_finished")
    assert finished["status"] == "error" and finished["decision"] == "reject"
    assert await asyncio.to_thread((workspace / "todo.txt").read_text) == "old\n"


async def test_a_next_turn_without_a_shortcut_asks_the_model_again(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.script(reply('{"tool": "answer"}'), reply("Hello!"))
    async with await _open(settings, llm, tmp_path, "json", selector=False) as duck:
        first = await duck.run(
            "List the files in the workspace.", thread_id="t", critic=False, memory=False
        )
        second = await duck.run("Say hello to my friend", thread_id="t", critic=False, memory=False)
    assert (first.status, second.status) == ("completed", "completed")
    assert second.answer == "Hello!"
    (decided,) = [e for e in second.events if e["type"] == "action_decided"]
    assert decided["shortcut"] is False and decided["outcome"] == "answer"
    assert len(llm.requests) == 2


async def test_native_tool_callers_get_no_shortcut(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.script(reply("Nothing to list."))
    async with await _open(settings, llm, tmp_path, "native") as native:
        result = await native.run("List the files in the workspace.", critic=False, memory=False)
    (route,) = [e for e in result.events if e["type"] == "route_decided"]
    assert route["shortcut"] is None
    assert "tools" in llm.requests[0]


async def test_a_question_with_no_tool_cue_is_one_thinker_call(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    llm.script(reply("Lima."))
    result = await duck.run("What is the capital of Peru?", critic=False, memory=False)

    assert (result.status, result.answer) == ("completed", "Lima.")
    (route,) = [e for e in result.events if e["type"] == "route_decided"]
    assert route["shortcut"]["tool"] == "answer"
    assert "no sign of needing a tool" in route["shortcut"]["reason"]
    (decided,) = [e for e in result.events if e["type"] == "action_decided"]
    assert (decided["shortcut"], decided["outcome"], decided["calls"]) == (True, "answer", [])
    # No directive was asked for: the one request is the thinker's, with no schema.
    (request,) = llm.requests
    assert "response_format" not in request
    assert request["messages"][-1]["content"] == "What is the capital of Peru?"


async def test_a_cue_in_the_question_still_asks_for_a_directive(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.script(reply('{"tool": "answer"}'), reply("I cannot tell the time."))
    async with await _open(settings, llm, tmp_path, "json", selector=False) as duck:
        result = await duck.run("Is it late now?", critic=False, memory=False)

    assert result.answer == "I cannot tell the time."
    (route,) = [e for e in result.events if e["type"] == "route_decided"]
    assert route["shortcut"] is None
    assert "response_format" in llm.requests[0] and len(llm.requests) == 2
