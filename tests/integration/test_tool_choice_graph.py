"""A turn whose tool is chosen by meaning, through the graph on the scripted server: the
model fills only the arguments, the path is resolved, the result is the answer, and the
loop stops after the one call."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from tests.support.scripted_llm import ScriptedLLM, reply

JSON_MODE = """
defaults: {{base_url: {url}, model: scripted, api_key: test}}
roles:
  action: {{tool_mode: json, structured_output: json_schema}}
"""
QUIET = {"critic": False, "memory": False}
NOTES = "The pond has three ducks.\nAna likes bread.\n"


@pytest.fixture
async def duck(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path, workspace: Path
) -> AsyncIterator[DuckLM]:
    models = tmp_path / "models.yaml"
    await asyncio.to_thread(models.write_text, JSON_MODE.format(url=llm.base_url))
    await asyncio.to_thread((workspace / "notes.md").write_text, NOTES)
    async with DuckLM.open(settings.model_copy(update={"models_config": models})) as runtime:
        yield runtime


async def test_a_result_that_is_the_answer_is_the_answer(duck: DuckLM, llm: ScriptedLLM) -> None:
    # The model writes "notes"; the workspace has notes.md. A second directive, were the
    # loop to ask for one, would read another file.
    llm.script(
        reply(json.dumps({"tool": "file_read", "args": {"path": "notes"}})),
        reply(json.dumps({"tool": "file_read", "args": {"path": "other.md"}})),
    )
    result = await duck.run("Tell me what's written in the notes", **QUIET)
    assert result.status == "completed", result.events
    route = next(e for e in result.events if e["type"] == "route_decided")
    assert route["selected"]["tool"] == "file_read" and route["shortcut"] is None
    # One model request: the arguments, under a grammar of file_read alone.
    assert len(llm.requests) == 1
    schema = llm.requests[0]["response_format"]["json_schema"]["schema"]
    assert [b["properties"]["tool"]["const"] for b in schema["anyOf"]] == ["file_read"]
    started = [e for e in result.events if e["type"] == "tool_call_started"]
    assert [(e["tool"], e["args"]) for e in started] == [("file_read", {"path": "notes.md"})]
    assert "three ducks" in result.answer and "Ana likes bread." in result.answer
    tokens = "".join(e["text"] for e in result.events if e["type"] == "token")
    assert tokens == result.answer


async def test_a_failed_call_is_answered_without_more_calls(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.script(
        reply(json.dumps({"tool": "file_read", "args": {"path": "recipes.md"}})),
        reply(
            "recipes.md is not in the workspace. "
            "The tool step limit (4) was reached; answer with what you have."
        ),
    )
    result = await duck.run("Tell me what's written in the recipes file", **QUIET)
    assert result.status == "completed", result.events
    assert len([e for e in result.events if e["type"] == "tool_call_started"]) == 1
    # The thinker answered at once; no second directive was asked for.
    assert len(llm.requests) == 2
    assert [e["type"] for e in result.events].count("action_decided") == 1
    # DuckLM's own note never reaches the person, streamed or final.
    assert result.answer == "recipes.md is not in the workspace."
    tokens = "".join(e["text"] for e in result.events if e["type"] == "token")
    assert "step limit" not in tokens and tokens.strip() == result.answer
