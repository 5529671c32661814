"""Questions a tiny model cannot spoil (issue 27, item 3), through the whole graph.

A write onto an existing file asks with its diff instead of handing the model an error
to retry; a call the person declined is not asked again in the turn; a call that already
ran is not run again; and a turn that goes round ends with an answer.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage

from ducklm.config.settings import Settings
from ducklm.kit.events import Event
from ducklm.runtime.facade import DuckLM, RunResult
from tests.support.scripted_llm import Reply, ScriptedLLM, call, reply

RM = call("shell_exec", command="rm old.log")
ANSWER = "Here is what happened."
JSON_MODELS = """
defaults: {{base_url: {url}, model: scripted, api_key: test}}
roles:
  action: {{tool_mode: json, structured_output: json_schema}}
"""


def _always(tool_call: Any) -> Any:
    """A model that makes the same call whenever it may call tools, else answers."""

    def respond(body: dict[str, Any]) -> Reply:
        if "tools" in body:
            return reply(tool_calls=[call(tool_call.name, **tool_call.args)])
        return reply(ANSWER)

    return respond


def _of(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e["type"] == kind]


def _questions(*results: RunResult) -> list[Event]:
    return [e for r in results for e in _of(r.events, "approval_requested")]


async def _tool_messages(duck: DuckLM, thread: str) -> list[ToolMessage]:
    return [m for m in await duck.messages(thread) if isinstance(m, ToolMessage)]


async def test_a_write_onto_an_existing_file_asks_with_its_diff(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path
) -> None:
    notes = workspace / "notes.md"
    await asyncio.to_thread(notes.write_text, "one duck\n")
    # No overwrite=true: the model is not told to call again, the person is asked.
    write = call("file_write", path="notes.md", content="two ducks\n")
    for thread, decision, kept in (("no", "reject", "one duck\n"), ("yes", "approve", None)):
        llm.script(reply(tool_calls=[write]))
        paused = await duck.run("Put two ducks in notes.md", thread_id=thread, critic=False)
        assert paused.status == "interrupted"
        (action,) = paused.pending[0]["request"]["action_requests"]
        assert action["description"].startswith("overwrite existing file notes.md:\n")
        assert "--- a/notes.md\n+++ b/notes.md\n" in action["description"]
        assert "-one duck\n+two ducks" in action["description"]
        assert await asyncio.to_thread(notes.read_text) == "one duck\n", "nothing before it"
        llm.script(reply(ANSWER))
        done = await duck.resume_run(thread, [{"type": decision}], critic=False, memory=False)
        assert (done.status, done.answer) == ("completed", ANSWER)
        (finished,) = _of(done.events, "tool_call_finished")
        assert finished["decision"] == decision
        assert await asyncio.to_thread(notes.read_text) == (kept or "two ducks\n")
    assert "already exists" not in str(llm.requests[-1]["messages"])


async def test_a_declined_call_is_asked_once_whatever_the_model_repeats(
    settings: Settings, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "old.log").write_text, "log\n")
    llm.set_responder(_always(RM))
    async with DuckLM.open(settings) as duck:
        paused = await duck.run("Delete the file old.log", thread_id="t", critic=False)
    assert paused.status == "interrupted"
    # A restart between question and answer: what was declined is read from the checkpoint.
    async with DuckLM.open(settings) as duck:
        no = [{"type": "reject", "message": "keep the log"}]
        done = await duck.resume_run("t", no, critic=False, memory=False)
        results = await _tool_messages(duck, "t")
    assert (done.status, done.answer) == ("completed", ANSWER)
    assert len(_questions(paused, done)) == 1, "no question asked twice"
    assert await asyncio.to_thread((workspace / "old.log").exists)
    assert [m.text for m in results] == [
        "the user rejected this call: keep the log",
        "the user declined this earlier in this turn: keep the log",
    ]
    finished = _of(done.events, "tool_call_finished")
    assert finished[-1]["repeat_of"] == results[0].tool_call_id
    assert len(_of(done.events, "tool_call_started")) == 1, "the repeat did not start"


async def test_an_approved_call_is_not_asked_or_run_again(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "old.log").write_text, "log\n")
    llm.set_responder(_always(RM))
    paused = await duck.run("Delete the file old.log", thread_id="t", critic=False)
    done = await duck.resume_run("t", [{"type": "approve"}], critic=False, memory=False)
    assert (done.status, done.answer) == ("completed", ANSWER)
    assert len(_questions(paused, done)) == 1
    assert not await asyncio.to_thread((workspace / "old.log").exists)
    first, again = await _tool_messages(duck, "t")
    assert first.text.startswith("exit code 0")
    assert again.text.startswith("[not run again: this same call already ran")
    assert again.text.endswith(first.text)


async def test_an_identical_read_gets_the_earlier_result(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "notes.md").write_text, "buy duck food\n")
    read = call("file_read", path="notes.md")
    same = call("file_read", path=" notes.md")
    llm.script(reply(tool_calls=[read]), reply(tool_calls=[same]), reply(ANSWER))
    result = await duck.run("What is in notes.md?", critic=False, memory=False)
    assert (result.status, result.answer) == ("completed", ANSWER)
    started = _of(result.events, "tool_call_started")
    assert [e["tool"] for e in started] == ["file_read"], "read once"
    first, second = _of(result.events, "tool_call_finished")
    assert second["repeat_of"] == first["call_id"] and second["status"] == "success"
    assert second["output"].endswith("buy duck food\n")
    # The repeat brought nothing new: the thinker answered instead of a third action.
    assert len(llm.requests) == 3 and "tools" not in llm.requests[-1]
    assert llm.pending == 0


async def test_a_model_looping_to_the_step_limit_ends_with_an_answer(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path
) -> None:
    folders = itertools.count()

    def respond(body: dict[str, Any]) -> Reply:
        if "tools" in body:  # a new folder each time: never a repeat
            return reply(tool_calls=[call("list_dir", path=f"d{next(folders)}")])
        return reply(ANSWER)

    llm.set_responder(respond)
    result = await duck.run("Look around", critic=False, memory=False)
    assert (result.status, result.answer) == ("completed", ANSWER)
    limit = duck.context.settings.max_action_steps
    assert len(_of(result.events, "tool_call_finished")) == limit
    assert not _questions(result)


async def test_in_json_mode_a_declined_call_is_asked_once(
    settings: Settings, llm: ScriptedLLM, workspace: Path, tmp_path: Path
) -> None:
    """The bundled model's way of calling tools: a JSON directive under a grammar."""
    models = tmp_path / "models.yaml"
    await asyncio.to_thread(models.write_text, JSON_MODELS.format(url=llm.base_url))
    await asyncio.to_thread((workspace / "old.log").write_text, "log\n")
    directive = json.dumps({"reasoning": "", "actions": [{"tool": RM.name, "args": RM.args}]})

    def respond(body: dict[str, Any]) -> Reply:
        return reply(directive if "response_format" in body else ANSWER)

    llm.set_responder(respond)
    options = {"models_config": models, "tool_selector": False}
    async with DuckLM.open(settings.model_copy(update=options)) as duck:
        # Words no file-operation rule reads whole: the model writes the directive.
        paused = await duck.run("Please tidy up the logs", thread_id="t", critic=False)
        assert paused.status == "interrupted"
        done = await duck.resume_run("t", [{"type": "reject"}], critic=False, memory=False)
        results = await _tool_messages(duck, "t")
    assert (done.status, done.answer) == ("completed", ANSWER)
    assert len(_questions(paused, done)) == 1
    assert results[-1].text == "the user declined this earlier in this turn: no reason given"
