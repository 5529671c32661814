"""The sudo password flow (the secret is written nowhere) and crash safety across processes."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM, NotWaitingError
from ducklm.stores.intents import CommandIntents
from ducklm.turn.tool_step import run as tool_run
from tests.support.cli import cli_env, run_cli, start_cli
from tests.support.fake_sudo import PASSWORD
from tests.support.scripted_llm import ScriptedLLM, ToolCallSpec, call, reply


async def _files_containing(root: Path, needle: bytes) -> list[Path]:
    def scan() -> list[Path]:
        hits = []
        for path in root.rglob("*"):
            if path.is_file() and needle in path.read_bytes():
                hits.append(path)
        return hits

    return await asyncio.to_thread(scan)


async def test_sudo_password_flow_leaves_no_trace(
    duck: DuckLM, llm: ScriptedLLM, fake_sudo: Path, settings: Settings, workspace: Path
) -> None:
    llm.script(reply(tool_calls=[call("shell_exec", command="sudo ls /root")]))
    paused = await duck.run("list root's home", critic=False, memory=False)
    assert paused.status == "interrupted"
    approval = paused.pending[0]["request"]["action_requests"][0]
    assert approval["args"]["command"] == "sudo ls /root"

    waiting = [e async for e in duck.resume(paused.thread_id, [{"type": "approve"}])]
    (asked,) = [e for e in waiting if e["type"] == "password_requested"]
    assert asked["request"]["command"] == "sudo ls /root"
    assert waiting[-1]["status"] == "interrupted"
    with pytest.raises(NotWaitingError, match="waiting for a password"):
        await duck.resume_run(paused.thread_id, [{"type": "approve"}])

    llm.script(reply("Listed."))
    events = [e async for e in duck.provide_password(paused.thread_id, PASSWORD)]
    assert events[-1]["status"] == "completed"
    finished = next(e for e in events if e["type"] == "tool_call_finished")
    assert finished["exit_code"] == 0, finished["output"]
    assert await asyncio.to_thread(fake_sudo.read_text) == "match\n"

    # Nowhere: not in the checkpoint, the audit log, DuckLM's tables, the log file, the
    # workspace, the events or the messages.
    needle = PASSWORD.encode()
    assert await _files_containing(settings.data_dir, needle) == []
    assert await _files_containing(workspace, needle) == []
    everything = [*paused.events, *waiting, *events]
    assert PASSWORD not in repr(everything)
    assert PASSWORD not in repr(await duck.messages(paused.thread_id))
    assert PASSWORD not in repr([r.data for r in await duck.events(paused.thread_id)])


async def test_wrong_token_asks_again_and_cancel_runs_nothing(
    duck: DuckLM, llm: ScriptedLLM, fake_sudo: Path
) -> None:
    llm.script(reply(tool_calls=[call("shell_exec", command="sudo ls /root")]))
    paused = await duck.run("list", critic=False, memory=False)
    [e async for e in duck.resume(paused.thread_id, [{"type": "approve"}])]
    # A client that skips provide_password and sends a made-up token is asked again.
    interrupt_id, _ = await duck.pending_request(paused.thread_id)
    await duck.graph.ainvoke(
        Command(resume={interrupt_id: {"password_token": "made-up"}}),
        {"configurable": {"thread_id": paused.thread_id}},
        context=duck.context,
    )
    _, again = await duck.pending_request(paused.thread_id)
    assert again["type"] == "password"
    assert "did not arrive" in again["error"]

    llm.script(reply("Not run."))
    events = [e async for e in duck.cancel_password(paused.thread_id)]
    finished = next(e for e in events if e["type"] == "tool_call_finished")
    assert "did not give the sudo password" in finished["output"]
    assert not await asyncio.to_thread(fake_sudo.exists), "sudo never ran"


async def test_a_step_stopped_mid_run_runs_no_command_twice_and_asks_no_password(
    settings: Settings, llm: ScriptedLLM, fake_sudo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = ToolCallSpec("shell_exec", {"command": "sudo ls /root"}, id="c-one")
    second = ToolCallSpec("shell_exec", {"command": "sudo ls /"}, id="c-two")
    real_invoke = tool_run._invoke

    async def dies_in_second(tool: Any, call: Any, args: dict[str, Any]) -> Any:
        if call["id"] == "c-two":  # its intent is written: the process "dies" as it starts
            raise RuntimeError("the process died")
        return await real_invoke(tool, call, args)

    async with DuckLM.open(settings) as duck:
        llm.script(reply(tool_calls=[first, second]))
        await duck.run("list both", thread_id="K2", critic=False, memory=False)
        [e async for e in duck.resume("K2", [{"type": "approve"}, {"type": "approve"}])]
        [e async for e in duck.provide_password("K2", PASSWORD)]
        with monkeypatch.context() as patch:
            patch.setattr(tool_run, "_invoke", dies_in_second)
            stopped = [e async for e in duck.provide_password("K2", PASSWORD)]
        assert stopped[-1]["status"] == "failed"

    async with DuckLM.open(settings) as duck:  # a new process: every password token is gone
        # The failed step still shows its last (answered) question, so a person answers it
        # again; the node then finds both intents and needs no password at all.
        llm.script(reply("One ran; the other's outcome is unknown."))
        resumed = [e async for e in duck.provide_password("K2", PASSWORD)]
    assert resumed[-1]["status"] == "completed", "no password asked for calls that do not run"
    assert not [e for e in resumed if e["type"] == "password_requested"]
    finished = {e["call_id"]: e for e in resumed if e["type"] == "tool_call_finished"}
    # The first call's result was kept when it ended (each call is a LangGraph task):
    # the re-run gets its real output back and reports nothing again.
    assert "c-one" not in finished
    ran = [e for e in stopped if e["type"] == "tool_call_finished" and e["call_id"] == "c-one"]
    assert ran[0]["status"] == "success"
    assert finished["c-two"]["output"].startswith("interrupted, outcome unknown")
    assert await asyncio.to_thread(fake_sudo.read_text) == "match\n", "sudo ran once in all"


@pytest.mark.slow
async def test_a_command_running_when_the_process_died_is_not_run_again(
    settings: Settings, llm: ScriptedLLM, workspace: Path, tmp_path: Path
) -> None:
    log = workspace / "log.txt"
    command = "echo start >> log.txt; sleep 30; echo end >> log.txt"
    llm.script(reply(tool_calls=[call("shell_exec", command=command)]))
    env = cli_env(settings)
    proc = await start_cli(
        "chat", "run it", "--thread", "K1", "--no-critic", "--no-memory", env=env, cwd=tmp_path
    )
    cli = asyncio.ensure_future(proc.communicate())
    # Until the command has started inside the sandbox (the CLI first loads the
    # embedding model, which takes a while on a busy machine).
    for _ in range(1200):
        if await asyncio.to_thread(lambda: log.exists() and log.read_text() == "start\n"):
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the command never started")
    assert proc.returncode is None, "the ducklm process is running"
    proc.kill()
    await cli
    assert proc.returncode == -signal.SIGKILL

    llm.script(reply("It was interrupted; I did not run it again."))
    resumed = await run_cli("resume", "K1", "--json", env=env, cwd=tmp_path)
    assert resumed.code == 0, resumed.stderr
    finished = next(e for e in resumed.events() if e["type"] == "tool_call_finished")
    assert finished["status"] == "unknown"
    assert finished["output"].startswith("interrupted, outcome unknown")
    assert await asyncio.to_thread(log.read_text) == "start\n", "never started twice"


async def test_a_call_another_worker_started_meanwhile_is_not_started_again(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A worker whose loop stalled past its lease reads no intent when it plans the call;
    # meanwhile the worker that took its run over starts the same call (same id, from
    # the same checkpoint). The insert that comes second must start nothing.
    command = "echo ran >> ran.txt"
    llm.script(
        reply(tool_calls=[ToolCallSpec("shell_exec", {"command": command}, id="c-race")]),
        reply("Its outcome is unknown."),
    )
    real_get = CommandIntents.get
    reads: list[str] = []

    async def read_before_the_other_started(self: CommandIntents, call_id: str) -> Any:
        reads.append(call_id)
        if len(reads) == 1:  # the plan's read: the other worker starts right after it
            await self.begin(call_id, "elsewhere", command)
            return None
        return await real_get(self, call_id)

    monkeypatch.setattr(CommandIntents, "get", read_before_the_other_started)
    done = await duck.run("append to ran.txt", critic=False, memory=False)
    assert reads[0] == "c-race"
    finished = next(e for e in done.events if e["type"] == "tool_call_finished")
    assert finished["status"] == "unknown"
    assert finished["output"].startswith("interrupted, outcome unknown")
    assert not await asyncio.to_thread((workspace / "ran.txt").exists), "started once, elsewhere"
