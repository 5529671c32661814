"""Delete, rename, copy and append through a real turn (issue 44): the rules make the call
the request names, the policy asks as its class requires, the change is undone; and a
call that does something else than the request asked says so first on its card."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM, RunResult
from tests.support.scripted_llm import ScriptedLLM, call, reply

QUIET = {"critic": False, "memory": False}
MODELS = """
defaults: {{base_url: {url}, model: scripted, api_key: test}}
roles:
  action: {{tool_mode: {mode}, structured_output: json_object_schema}}
"""


async def _open(settings: Settings, llm: ScriptedLLM, tmp_path: Path, mode: str) -> DuckLM:
    models = tmp_path / f"models-{mode}.yaml"
    await asyncio.to_thread(models.write_text, MODELS.format(url=llm.base_url, mode=mode))
    update = {"models_config": models, "tool_selector": False}
    return DuckLM.open(settings.model_copy(update=update))  # type: ignore[return-value]


@pytest.fixture
async def duck(settings: Settings, llm: ScriptedLLM, tmp_path: Path) -> AsyncIterator[DuckLM]:
    """DuckLM on a model that writes JSON directives: the rule shortcuts apply."""
    async with await _open(settings, llm, tmp_path, "json") as runtime:
        yield runtime


@pytest.fixture
async def files(workspace: Path) -> Path:
    def seed() -> None:
        (workspace / "old.log").write_text("kept for years\n")
        (workspace / "draft.txt").write_text("my draft\n")
        (workspace / "todo.txt").write_text("eggs")

    await asyncio.to_thread(seed)
    return workspace


def _read(path: Path) -> str | None:
    return path.read_text() if path.exists() else None


def _finished(result: RunResult) -> dict[str, Any]:
    (event,) = [e for e in result.events if e["type"] == "tool_call_finished"]
    return event


async def test_delete_asks_runs_and_is_undone(duck: DuckLM, llm: ScriptedLLM, files: Path) -> None:
    paused = await duck.run("Please get rid of the old.log file", thread_id="d", **QUIET)
    assert paused.status == "interrupted"
    (action,) = paused.pending[0]["request"]["action_requests"]
    # A delete is destructive: the person is asked, and the card says what it does.
    assert (action["name"], action["args"]) == ("file_delete", {"path": "old.log"})
    assert action["description"] == "delete old.log" and "default_decision" not in action

    done = await duck.resume_run("d", [{"type": "approve"}], **QUIET)
    assert (done.status, done.answer) == ("completed", "Deleted old.log")
    assert llm.requests == [], "the rule made the call and its result is the answer"
    event = _finished(done)
    assert [c["path"] for c in event["changed_files"]] == ["old.log"] and event["undo_id"]
    assert await asyncio.to_thread(_read, files / "old.log") is None

    await duck.undo("d")
    assert await asyncio.to_thread(_read, files / "old.log") == "kept for years\n"


async def test_rename_append_and_copy_run_and_undo_one_call_at_a_time(
    duck: DuckLM, llm: ScriptedLLM, files: Path
) -> None:
    renamed = await duck.run("I'd like draft.txt renamed to final.txt", thread_id="r", **QUIET)
    # Nothing is lost in a rename onto a free name: it runs without a question.
    assert (renamed.status, renamed.answer) == ("completed", "Renamed draft.txt to final.txt")
    appended = await duck.run("add 'milk' to the end of todo.txt", thread_id="r", **QUIET)
    assert appended.answer == "Appended 1 line to todo.txt"
    copied = await duck.run("cp todo.txt backup/", thread_id="r", **QUIET)
    assert copied.answer == "Copied todo.txt to backup/todo.txt"
    assert llm.requests == []
    on_disk = await asyncio.to_thread(
        lambda: {
            p: _read(files / p) for p in ("draft.txt", "final.txt", "todo.txt", "backup/todo.txt")
        }
    )
    assert on_disk == {
        "draft.txt": None,
        "final.txt": "my draft\n",
        "todo.txt": "eggs\nmilk\n",
        "backup/todo.txt": "eggs\nmilk\n",
    }

    await duck.undo("r")  # the last turn: the copy
    assert await asyncio.to_thread(_read, files / "backup" / "todo.txt") is None
    await duck.undo("r", to_call=_finished(appended)["call_id"])
    assert await asyncio.to_thread(_read, files / "todo.txt") == "eggs"
    await duck.undo("r", to_call=_finished(renamed)["call_id"])
    assert await asyncio.to_thread(_read, files / "draft.txt") == "my draft\n"
    assert await asyncio.to_thread(_read, files / "final.txt") is None


async def test_an_overwrite_for_a_delete_says_so_first_and_defaults_to_deny(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path, files: Path
) -> None:
    """The bundled model's call of issue 44, made by a model with native tool calls (no
    shortcut): `file_write` over the file it was asked to delete."""
    llm.script(
        reply(tool_calls=[call("file_write", path="old.log", content="")]),
        reply("I left old.log as it was."),
    )
    async with await _open(settings, llm, tmp_path, "native") as native:
        paused = await native.run("Delete old.log", thread_id="m", **QUIET)
        assert paused.status == "interrupted"
        (action,) = paused.pending[0]["request"]["action_requests"]
        assert action["description"].startswith(
            "Does not match the request: this replaces everything in old.log, but the "
            "request asked to delete old.log. overwrite existing file old.log"
        )
        assert action["default_decision"] == "reject"
        done = await native.resume_run("m", [{"type": "reject"}], **QUIET)
    assert done.status == "completed" and _finished(done)["decision"] == "reject"
    assert await asyncio.to_thread(_read, files / "old.log") == "kept for years\n"
