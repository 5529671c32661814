"""`action_decided`: what each action step chose, in native and json tool mode, and how
the CLI shows it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ducklm.cli.console import ConsolePrinter
from ducklm.config.settings import Settings
from ducklm.kit.events import Event
from ducklm.runtime.facade import DuckLM
from ducklm.turn.action_decision import DIRECTIVE_CHARS
from tests.support.scripted_llm import ScriptedLLM, call, reply

JSON_MODE = """
defaults: {{base_url: {url}, model: scripted, api_key: test}}
roles:
  action: {{tool_mode: json, structured_output: json_schema}}
"""


def directive_mode(models: Path) -> dict[str, object]:
    """Settings for the model deciding by directive: the tool selector off.

    These tests are about the directive the model writes; choosing the tool by meaning
    (which leaves the model only the arguments) is tested in tests/unit/test_tool_choice.py
    and test_tool_choice_graph.py.
    """
    return {"models_config": models, "tool_selector": False}


QUIET = {"critic": False, "memory": False}


def decided(events: list[Event]) -> list[Event]:
    return [e for e in events if e["type"] == "action_decided"]


def directive(*actions: tuple[str, dict[str, object]], reasoning: str = "because") -> str:
    return json.dumps(
        {"reasoning": reasoning, "actions": [{"tool": t, "args": a} for t, a in actions]}
    )


@pytest.fixture
async def json_duck(settings: Settings, llm: ScriptedLLM, tmp_path: Path) -> AsyncIterator[DuckLM]:
    models = tmp_path / "models.yaml"
    await asyncio.to_thread(models.write_text, JSON_MODE.format(url=llm.base_url))
    async with DuckLM.open(settings.model_copy(update=directive_mode(models))) as runtime:
        yield runtime


async def test_native_tool_call_then_answer(duck: DuckLM, llm: ScriptedLLM) -> None:
    chosen = call("list_dir", path=".")
    llm.script(reply(tool_calls=[chosen]), reply("Nothing here."))
    result = await duck.run("what is here?", **QUIET)
    assert result.status == "completed", result.events
    first, second = decided(result.events)
    started = next(e for e in result.events if e["type"] == "tool_call_started")
    assert first["mode"] == "native" and first["outcome"] == "tools"
    assert first["calls"] == [
        {"call_id": started["call_id"], "tool": "list_dir", "args": {"path": "."}}
    ]
    assert first["invalid_calls"] == [] and first["repaired"] is False
    assert second["outcome"] == "answer" and second["calls"] == []
    assert second["directive"] == "Nothing here."
    # Audited like the other decisions: it has its place in the thread's numbering.
    assert isinstance(first["seq"], int)


async def test_native_reply_without_a_tool(duck: DuckLM, llm: ScriptedLLM) -> None:
    # Long, and not a loop (the repetition guard would end "Quack! " * 400 at once).
    llm.script(reply(" ".join(f"Quack number {i}!" for i in range(400))))
    result = await duck.run("hello", **QUIET)
    (only,) = decided(result.events)
    assert only["outcome"] == "answer" and only["calls"] == []
    assert len(only["directive"]) == DIRECTIVE_CHARS and only["directive"].endswith("\u2026")


async def test_json_valid_directive(json_duck: DuckLM, llm: ScriptedLLM) -> None:
    written = directive(("list_dir", {"path": "."}), reasoning="look first")
    llm.script(reply(written), reply(directive()), reply("The folder is empty."))
    result = await json_duck.run("what is here?", **QUIET)
    assert result.status == "completed", result.events
    first, second = decided(result.events)
    assert first["mode"] == "json" and first["outcome"] == "tools"
    assert [(c["tool"], c["args"]) for c in first["calls"]] == [("list_dir", {"path": "."})]
    assert first["calls"][0]["call_id"].startswith("call_")
    assert first["directive"] == written
    assert first["repaired"] is False and first["problem"] == ""
    assert second["outcome"] == "answer" and second["directive"] == directive()


async def test_json_repaired_directive(json_duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.script(
        reply("sure! I will list the folder"),
        reply(directive(("list_dir", {"path": "."}))),
        reply(directive()),
        reply("The folder is empty."),
    )
    result = await json_duck.run("what is here?", **QUIET)
    first = decided(result.events)[0]
    assert first["outcome"] == "tools" and first["repaired"] is True
    assert "not valid JSON" in first["problem"]
    assert first["directive"] == directive(("list_dir", {"path": "."}))


async def test_json_unusable_directive(json_duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.script(
        reply(directive(("launch_rockets", {}))),
        reply(directive(("launch_rockets", {"now": True}))),
        reply("I could not do that."),
    )
    result = await json_duck.run("launch the rockets", **QUIET)
    assert result.status == "completed", result.events
    (only,) = decided(result.events)
    assert only["outcome"] == "unusable" and only["calls"] == []
    assert only["repaired"] is False
    assert "unknown tool 'launch_rockets'" in only["problem"]
    assert only["directive"] == directive(("launch_rockets", {"now": True}))
    assert not [e for e in result.events if e["type"] == "tool_call_started"]


def test_the_console_shows_one_line_per_decision(capsys: pytest.CaptureFixture[str]) -> None:
    printer = ConsolePrinter(as_json=False)
    base = {"type": "action_decided", "invalid_calls": [], "problem": "", "repaired": False}
    tool = {"call_id": "c1", "tool": "list_dir", "args": {"path": "."}}
    printer.show({**base, "outcome": "tools", "calls": [tool]})
    printer.show({**base, "outcome": "answer", "calls": []})
    printer.show({**base, "outcome": "unusable", "calls": [], "problem": "not valid JSON"})
    printer.show({**base, "outcome": "tools", "calls": [tool], "shortcut": True})
    assert capsys.readouterr().err.splitlines() == [
        'action: list_dir {"path": "."}',
        "action: no tool (answer)",
        "action: no usable directive (not valid JSON)",
        'action: list_dir {"path": "."} (rule shortcut)',
    ]
    ConsolePrinter(as_json=True).show({**base, "outcome": "answer", "calls": []})
    assert json.loads(capsys.readouterr().out)["type"] == "action_decided"
