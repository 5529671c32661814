"""Every question of a tool step comes before any of its calls runs (issue 12, point 8).

The tool node re-runs from its top on each resume. A call that ran before a later
question (a password asked inside the execution loop) would be reported as "already
ran" with its output lost, or run twice. Each test closes DuckLM and opens a new one on
the same data dir between questions, as a restart would, and checks on disk, in the
audit log, in the state and in the model's next request that nothing ran before the
last answer and every call ran once.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage

from ducklm.config.settings import Settings
from ducklm.kit.events import Event
from ducklm.runtime.facade import DuckLM, RunResult
from ducklm.turn.tool_step.questions import PASSWORD_LOST
from tests.support.fake_sudo import PASSWORD
from tests.support.scripted_llm import ScriptedLLM, ToolCallSpec, reply

LS = ToolCallSpec("shell_exec", {"command": "ls"}, id="c-ls")
SUDO = ToolCallSpec("shell_exec", {"command": "sudo ls /root"}, id="c-sudo")
SUDO_2 = ToolCallSpec("shell_exec", {"command": "sudo ls /"}, id="c-sudo-2")
WRITE = ToolCallSpec("file_write", {"path": "new.txt", "content": "fresh"}, id="c-write")
APPROVE = {"type": "approve"}
Answer = Callable[[DuckLM], AsyncIterator[Event]]


async def _start(settings: Settings, llm: ScriptedLLM, *calls: ToolCallSpec) -> RunResult:
    llm.script(reply(tool_calls=list(calls)))
    async with DuckLM.open(settings) as duck:
        paused = await duck.run("do it", thread_id="q", critic=False, memory=False)
    assert paused.status == "interrupted"
    return paused


async def _after_restart(settings: Settings, answer: Answer) -> list[Event]:
    """Answer the pending question in a freshly opened DuckLM (a new process's vault)."""
    async with DuckLM.open(settings) as duck:
        return [e async for e in answer(duck)]


def _decide(*decisions: dict[str, Any]) -> Answer:
    return lambda duck: duck.resume("q", list(decisions))


def _password(duck: DuckLM) -> AsyncIterator[Event]:
    return duck.provide_password("q", PASSWORD)


def _asked(events: list[Event]) -> dict[str, Any]:
    """The one question `events` end at, with nothing run before it."""
    assert not [e for e in events if e["type"].startswith("tool_call_")], "nothing ran yet"
    assert events[-1]["status"] == "interrupted"
    (question,) = [e for e in events if e["type"].endswith("_requested")]
    request: dict[str, Any] = question["request"]
    return request


async def _nothing_ran(duck: DuckLM, fake_sudo: Path, *call_ids: str) -> None:
    assert not await asyncio.to_thread(fake_sudo.exists), "sudo never ran"
    for call_id in call_ids:
        assert await duck.context.intents.get(call_id) is None, f"{call_id} never started"
    events = await duck.events("q")
    assert not [e for e in events if e.type.startswith("tool_call_")]


async def _each_ran_once(duck: DuckLM, llm: ScriptedLLM, *call_ids: str) -> dict[str, str]:
    """Assert every call ran and reached the model exactly once; its output by call id."""
    events = await duck.events("q")
    messages = await duck.messages("q")
    for kind in ("tool_call_started", "tool_call_finished"):
        seen = Counter(e.data["call_id"] for e in events if e.type == kind)
        assert seen == dict.fromkeys(call_ids, 1), kind
    stored = Counter(m.tool_call_id for m in messages if isinstance(m, ToolMessage))
    assert stored == dict.fromkeys(call_ids, 1)
    sent = [m for m in llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert Counter(m["tool_call_id"] for m in sent) == dict.fromkeys(call_ids, 1)
    outputs = {m["tool_call_id"]: str(m["content"]) for m in sent}
    for output in outputs.values():
        assert "already ran" not in output and "outcome unknown" not in output
    return outputs


async def _sudo_runs(fake_sudo: Path) -> list[str]:
    return (await asyncio.to_thread(fake_sudo.read_text)).splitlines()


async def test_a_read_only_call_waits_for_the_password_of_a_sudo_call(
    settings: Settings, llm: ScriptedLLM, fake_sudo: Path, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "seen.txt").write_text, "x")
    paused = await _start(settings, llm, LS, SUDO)
    assert [r["name"] for r in paused.pending[0]["request"]["action_requests"]] == ["shell_exec"]

    asked = _asked(await _after_restart(settings, _decide(APPROVE)))
    assert (asked["type"], asked["call_id"]) == ("password", "c-sudo")
    async with DuckLM.open(settings) as duck:
        await _nothing_ran(duck, fake_sudo, "c-ls", "c-sudo")

    llm.script(reply("Listed both."))
    done = await _after_restart(settings, _password)
    assert done[-1]["status"] == "completed"
    async with DuckLM.open(settings) as duck:
        outputs = await _each_ran_once(duck, llm, "c-ls", "c-sudo")
    assert "seen.txt" in outputs["c-ls"], "the model gets the output of ls"
    assert await _sudo_runs(fake_sudo) == ["match"]


async def test_a_write_waits_for_the_password_of_a_sudo_call(
    settings: Settings, llm: ScriptedLLM, fake_sudo: Path, workspace: Path
) -> None:
    await _start(settings, llm, WRITE, SUDO)
    _asked(await _after_restart(settings, _decide(APPROVE)))
    assert not await asyncio.to_thread((workspace / "new.txt").exists), "not written yet"
    async with DuckLM.open(settings) as duck:
        await _nothing_ran(duck, fake_sudo, "c-sudo")

    llm.script(reply("Written and listed."))
    done = await _after_restart(settings, _password)
    assert done[-1]["status"] == "completed"
    async with DuckLM.open(settings) as duck:
        outputs = await _each_ran_once(duck, llm, "c-write", "c-sudo")
    assert "exists" not in outputs["c-write"], "written once, not refused on a second try"
    assert await asyncio.to_thread((workspace / "new.txt").read_text) == "fresh"
    assert await _sudo_runs(fake_sudo) == ["match"]


async def test_two_sudo_calls_and_a_password_lost_in_a_restart(
    settings: Settings, llm: ScriptedLLM, fake_sudo: Path
) -> None:
    paused = await _start(settings, llm, SUDO, SUDO_2)
    assert len(paused.pending[0]["request"]["action_requests"]) == 2, "one approval question"

    first = _asked(await _after_restart(settings, _decide(APPROVE, APPROVE)))
    assert first["call_id"] == "c-sudo"
    second = _asked(await _after_restart(settings, _password))
    assert (second["call_id"], second["command"]) == ("c-sudo-2", "sudo ls /")
    async with DuckLM.open(settings) as duck:
        # The first password went into the vault of a process that is gone: asked again.
        again = _asked([e async for e in _password(duck)])
        assert (again["call_id"], again["error"]) == ("c-sudo", PASSWORD_LOST)
        await _nothing_ran(duck, fake_sudo, "c-sudo", "c-sudo-2")

        llm.script(reply("Listed both."))
        done = [e async for e in _password(duck)]
        assert done[-1]["status"] == "completed"
        await _each_ran_once(duck, llm, "c-sudo", "c-sudo-2")
    assert await _sudo_runs(fake_sudo) == ["match", "match"]


async def test_two_passwords_in_one_process_are_asked_once_each(
    duck: DuckLM, llm: ScriptedLLM, fake_sudo: Path
) -> None:
    llm.script(reply(tool_calls=[SUDO, SUDO_2]))
    await duck.run("do it", thread_id="q", critic=False, memory=False)
    assert _asked([e async for e in duck.resume("q", [APPROVE, APPROVE])])["call_id"] == "c-sudo"
    assert _asked([e async for e in _password(duck)])["call_id"] == "c-sudo-2"
    llm.script(reply("Listed both."))
    done = [e async for e in _password(duck)]
    assert done[-1]["status"] == "completed"
    await _each_ran_once(duck, llm, "c-sudo", "c-sudo-2")
    assert await _sudo_runs(fake_sudo) == ["match", "match"]


async def test_a_rejected_sudo_call_asks_no_password(
    settings: Settings, llm: ScriptedLLM, fake_sudo: Path
) -> None:
    await _start(settings, llm, LS, SUDO)
    llm.script(reply("I did not use sudo."))
    done = await _after_restart(settings, _decide({"type": "reject"}))
    assert done[-1]["status"] == "completed"
    assert not [e for e in done if e["type"] == "password_requested"]
    async with DuckLM.open(settings) as duck:
        outputs = await _each_ran_once(duck, llm, "c-ls", "c-sudo")
    assert outputs["c-sudo"] == "the user rejected this call"
    assert not await asyncio.to_thread(fake_sudo.exists), "sudo never ran"


async def test_an_edit_decides_whether_a_password_is_asked(
    duck: DuckLM, llm: ScriptedLLM, fake_sudo: Path, workspace: Path
) -> None:
    stale = workspace / "stale.txt"
    await asyncio.to_thread(stale.write_text, "x")
    remove = ToolCallSpec("shell_exec", {"command": "rm stale.txt"}, id="c-rm")
    llm.script(reply(tool_calls=[remove, SUDO]))
    await duck.run("do it", thread_id="q", critic=False, memory=False)
    # `rm` edited into `sudo rm` now needs the password; `sudo ls` edited into `ls` not.
    decisions = [_edit("sudo rm stale.txt"), _edit("ls")]
    asked = _asked([e async for e in duck.resume("q", decisions)])
    assert (asked["call_id"], asked["command"]) == ("c-rm", "sudo rm stale.txt")
    assert await asyncio.to_thread(stale.exists), "nothing ran before the password"

    llm.script(reply("Removed."))
    done = [e async for e in _password(duck)]
    assert done[-1]["status"] == "completed"
    await _each_ran_once(duck, llm, "c-rm", "c-sudo")
    assert not await asyncio.to_thread(stale.exists)
    assert await _sudo_runs(fake_sudo) == ["match"]


def _edit(command: str) -> dict[str, Any]:
    return {"type": "edit", "edited_action": {"name": "shell_exec", "args": {"command": command}}}
