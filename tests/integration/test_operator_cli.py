"""Operator commands as separate processes: recovery after a kill, threads, events
--follow, history --checkpoints, replay, prune, models ping, doctor; and that the ones
that only read tables or files (threads, events, approvals, experience, skills) load
neither the graph nor the model libraries."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ducklm.config.settings import Settings
from ducklm.learning.skills import SkillRegistry
from ducklm.runtime.facade import DuckLM
from ducklm.runtime.operator import open_operator_stores
from ducklm.stores.approvals import ApprovalRules
from ducklm.stores.experience import ExperienceLog, ExperienceRecord
from tests.support.cli import CliResult, cli_env, kill_mid_run, run_cli, run_cli_loading
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import serve, stream

pytestmark = pytest.mark.slow
QUIET = ("--no-critic", "--no-memory")


def _lines(result: CliResult) -> list[dict[str, Any]]:
    assert result.code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


async def test_a_killed_run_is_marked_at_the_next_start_and_resumes(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    env = cli_env(settings)
    await kill_mid_run(llm, env, tmp_path, "K1")

    (thread,) = _lines(await run_cli("threads", "--json", env=env, cwd=tmp_path))
    assert thread["id"] == "K1"
    assert thread["title"] == "hello"
    assert thread["last_task"]["status"] == "interrupted"
    assert thread["last_task"]["error"] == "interrupted by restart"
    last = _lines(await run_cli("events", "K1", "--json", env=env, cwd=tmp_path))[-1]
    assert (last["type"], last["status"], last["reason"]) == (
        "done",
        "interrupted",
        "interrupted by restart",
    )

    llm.script(reply("Hello again."))
    resumed = await run_cli("resume", "K1", "--json", env=env, cwd=tmp_path)
    assert resumed.code == 0, resumed.stderr
    assert resumed.events()[-1]["answer"] == "Hello again."
    (thread,) = _lines(await run_cli("threads", "--json", env=env, cwd=tmp_path))
    assert thread["last_task"]["status"] == "completed"


async def test_the_server_resumes_a_task_interrupted_by_restart(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    await kill_mid_run(llm, cli_env(settings), tmp_path, "K2")
    llm.script(reply("Recovered."))
    async with serve(settings) as served:
        (task,) = (await served.client.get("/v1/tasks", params={"conversation_id": "K2"})).json()
        assert (task["status"], task["error"]) == ("interrupted", "interrupted by restart")
        events = await stream(served, f"/v1/tasks/{task['task_id']}/resume/stream", {})
        assert events[-1]["status"] == "completed"
        assert events[-1]["answer"] == "Recovered."
        again = await served.client.post(f"/v1/tasks/{task['task_id']}/resume/stream")
        assert again.status_code == 409


async def test_events_follow_ends_with_the_task(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    env = cli_env(settings)
    llm.script(reply("Slow answer.", delay_s=2))
    chat = asyncio.create_task(
        run_cli("chat", "hi", "--thread", "F1", *QUIET, env=env, cwd=tmp_path)
    )
    for _ in range(1200):
        if llm.requests:
            break
        await asyncio.sleep(0.05)
    followed = await run_cli("events", "F1", "--follow", "--json", env=env, cwd=tmp_path)
    assert (await chat).code == 0
    types = [e["type"] for e in _lines(followed)]
    assert types[0] == "run_started"
    assert types[-1] == "done"
    assert _lines(followed)[-1]["status"] == "completed"


async def test_history_checkpoints_replay_and_prune(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    env = cli_env(settings)
    llm.script(reply("First answer."))
    assert (await run_cli("chat", "hi", "--thread", "R1", *QUIET, env=env, cwd=tmp_path)).code == 0
    before = _lines(
        await run_cli("history", "R1", "--checkpoints", "--json", env=env, cwd=tmp_path)
    )
    assert before[0]["next"] == []
    assert before[-1]["source"] == "input"
    assert {"checkpoint_id", "step", "node", "created_at"} <= before[0].keys()

    # Replay from the turn's input: a fork whose answer replaces the first one.
    llm.script(reply("Second answer."))
    replayed = await run_cli("replay", "R1", "--json", *QUIET, env=env, cwd=tmp_path)
    assert replayed.code == 0, replayed.stderr
    assert replayed.events()[-1]["answer"] == "Second answer."
    messages = _lines(await run_cli("history", "R1", "--json", env=env, cwd=tmp_path))
    assert [(m["type"], m["content"]) for m in messages] == [
        ("human", "hi"),
        ("ai", "Second answer."),
    ]

    # The first branch is what prune may delete; the current state stays whole.
    dry = _lines(
        await run_cli("prune", "--keep-last", "1", "--dry-run", "--json", env=env, cwd=tmp_path)
    )
    (report,) = dry
    assert report["deleted"] >= 1
    assert report["dry_run"] is True
    pruned = await run_cli("prune", "--keep-last", "1", env=env, cwd=tmp_path)
    assert pruned.code == 0, pruned.stderr
    assert f"deleted {report['deleted']} of" in pruned.stdout
    assert "before" in pruned.stdout and "after" in pruned.stdout
    assert "vacuuming" in pruned.stderr
    after = _lines(await run_cli("history", "R1", "--json", env=env, cwd=tmp_path))
    assert after == messages
    llm.script(reply("Third answer."))
    more = await run_cli("chat", "again", "--thread", "R1", "--json", *QUIET, env=env, cwd=tmp_path)
    assert more.events()[-1]["answer"] == "Third answer."
    assert len(llm.requests[-1]["messages"]) >= 4, "the pruned thread still has its history"


async def test_prune_needs_a_policy(settings: Settings, tmp_path: Path) -> None:
    result = await run_cli("prune", env=cli_env(settings), cwd=tmp_path)
    assert result.code == 2
    assert "--keep-last" in result.stderr


async def test_models_ping_and_doctor_check_each_role(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    env = cli_env(settings)
    checks = {
        c["name"]: c
        for c in _lines(await run_cli("models", "ping", "--json", env=env, cwd=tmp_path))
    }
    assert checks[f"model server {llm.base_url}"]["ok"] is True
    assert checks["model of thinker"]["ok"] is True
    doctor = await run_cli("doctor", "--json", env=env, cwd=tmp_path)
    found = {c["name"]: c for c in map(json.loads, doctor.stdout.splitlines())}
    assert found["model of action"]["ok"] is True
    assert found["embedding model"]["ok"] is True, found["embedding model"]
    assert found["qdrant"]["ok"] is True


HEAVY = ("torch", "langgraph", "langchain_core", "openai", "qdrant_client", "ducklm.graph")


async def test_threads_and_events_read_the_tables_without_the_graph(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    # They used to import the graph and the checkpointer for nothing: about 5 s a command.
    llm.set_responder(lambda body: reply("Hello."))
    async with DuckLM.open(settings) as duck:
        done = await duck.run("hi", thread_id="T1", critic=False, memory=False)
    assert done.status == "completed"
    env = cli_env(settings)
    shown: dict[str, list[dict[str, Any]]] = {}
    for command in (("threads", "--json"), ("events", "T1", "--json")):
        result, loaded = await run_cli_loading(HEAVY, *command, env=env, cwd=tmp_path)
        assert result.code == 0, result.stderr
        assert loaded == [], command
        shown[command[0]] = result.events()
    (thread,) = shown["threads"]
    assert (thread["id"], thread["last_task"]["status"]) == ("T1", "completed")
    types = [event["type"] for event in shown["events"]]
    assert types[0] == "run_started" and types[-1] == "done", types
    assert {event["thread_id"] for event in shown["events"]} == {"T1"}


async def test_rules_reflections_and_skills_are_read_without_the_runtime(
    settings: Settings, skills_dir: Path, tmp_path: Path
) -> None:
    async with open_operator_stores(settings) as stores:
        await ApprovalRules(stores.db).add("file_write", "overwrite:a.txt", "overwrite a.txt")
        for thread, lesson in (("T1", "Look first."), ("T2", "Ask less.")):
            record = ExperienceRecord("", thread, None, 0.8, "Listed the files.", lesson=lesson)
            await ExperienceLog(stores.db).add(record)
    env = cli_env(settings)
    shown: dict[str, list[dict[str, Any]]] = {}
    for command in (
        ("approvals", "list", "--json"),
        ("experience", "--thread", "T1", "--json"),
        ("skills", "list", "--json"),
    ):
        result, loaded = await run_cli_loading(HEAVY, *command, env=env, cwd=tmp_path)
        assert result.code == 0, result.stderr
        assert loaded == [], command
        shown[command[0]] = result.events()
    assert [(r["tool"], r["pattern"]) for r in shown["approvals"]] == [
        ("file_write", "overwrite:a.txt")
    ]
    assert [(r["thread_id"], r["lesson"]) for r in shown["experience"]] == [("T1", "Look first.")]
    bundled = await asyncio.to_thread(SkillRegistry.load, skills_dir)
    assert [s["id"] for s in shown["skills"]] == [s.id for s in bundled.skills]
    assert bundled.skills, "the copy of the bundled skills has skills to list"
