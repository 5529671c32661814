"""The `ducklm` command in separate processes: exit codes, JSON events, restart-then-resume."""

from __future__ import annotations

import asyncio
import json
from collections import deque
from pathlib import Path
from typing import Any

import pytest

from ducklm.config.settings import Settings
from ducklm.kit.events import EVENT_TYPES
from ducklm.learning.skill_proposals import NewProposal, write_proposal
from ducklm.runtime.operator import open_operator_stores
from tests.support.cli import cli_env, run_cli
from tests.support.scripted_llm import Reply, ScriptedLLM, call, reply

pytestmark = pytest.mark.slow


async def test_chat_prints_the_streamed_answer(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.script(reply("Quack quack."))
    result = await run_cli(
        "chat", "hi", "--no-critic", "--no-memory", env=cli_env(settings), cwd=tmp_path
    )
    assert result.code == 0, result.stderr
    assert result.stdout == "Quack quack.\n"
    assert "[completed] thread" in result.stderr


async def test_chat_prints_the_plan_and_its_progress(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    plan = {"steps": [{"id": "1", "goal": "Greet the ducks"}, {"id": "2", "goal": "Count them"}]}
    actions = deque([reply("Greeted."), reply("There are three.")])

    def answer(body: dict[str, Any]) -> Reply:
        if "response_format" in body:
            return reply(json.dumps(plan))
        return actions.popleft() if "tools" in body else reply("I greeted and counted them.")

    llm.set_responder(answer)
    result = await run_cli(
        "chat", "First greet the ducks, then count them.", "--no-critic", "--no-memory",
        env=cli_env(settings), cwd=tmp_path,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert result.stdout == "I greeted and counted them.\n"
    assert "Plan:\n  1. Greet the ducks\n  2. Count them\n" in result.stderr
    assert "[step 1/2] Greet the ducks" in result.stderr
    assert "[step 1 done] Greeted." in result.stderr
    assert "[step 2 done] There are three." in result.stderr


async def test_restart_then_resume_from_sqlite(
    settings: Settings, llm: ScriptedLLM, workspace: Path, tmp_path: Path
) -> None:
    target = workspace / "a.txt"
    await asyncio.to_thread(target.write_text, "old")
    env = cli_env(settings)
    llm.script(reply(tool_calls=[call("file_write", path="a.txt", content="new", overwrite=True)]))

    paused = await run_cli(
        "chat",
        "overwrite a.txt",
        "--thread",
        "T1",
        "--json",
        "--no-critic",
        "--no-memory",
        env=env,
        cwd=tmp_path,
    )
    assert paused.code == 3, paused.stderr
    events = paused.events()
    assert {e["type"] for e in events} <= EVENT_TYPES
    assert [e["type"] for e in events][-2:] == ["approval_requested", "done"]
    assert events[-1]["status"] == "interrupted"
    assert await asyncio.to_thread(target.read_text) == "old"

    # A second process, sharing only the files in the data dir, answers the question.
    llm.script(reply("Overwritten."))
    resumed = await run_cli(
        "resume",
        "T1",
        "--decision",
        "approve",
        "--json",
        "--no-critic",
        "--no-memory",
        env=env,
        cwd=tmp_path,
    )
    assert resumed.code == 0, resumed.stderr
    assert resumed.events()[-1] == {
        **resumed.events()[-1],
        "type": "done",
        "status": "completed",
        "answer": "Overwritten.",
    }
    assert await asyncio.to_thread(target.read_text) == "new"

    history = await run_cli("history", "T1", "--json", env=env, cwd=tmp_path)
    messages = [json.loads(line) for line in history.stdout.splitlines()]
    assert [m["type"] for m in messages] == ["human", "ai", "tool", "ai"]

    audit = await run_cli("events", "T1", "--json", env=env, cwd=tmp_path)
    seqs = [json.loads(line)["seq"] for line in audit.stdout.splitlines()]
    assert seqs == list(range(1, len(seqs) + 1)), (
        "per-thread sequence is monotonic across processes"
    )


async def test_failed_run_exits_1_and_bad_input_exits_2(
    settings: Settings, unused_tcp_port: int, tmp_path: Path
) -> None:
    env = cli_env(settings) | {"DUCK_LLM_BASE_URL": f"http://127.0.0.1:{unused_tcp_port}/v1"}
    failed = await run_cli("chat", "hi", "--no-critic", "--no-memory", env=env, cwd=tmp_path)
    assert failed.code == 1
    assert "error: The model server is not reachable" in failed.stderr
    assert "Traceback" not in failed.stderr

    nothing = await run_cli("resume", "T9", "--decision", "approve", env=env, cwd=tmp_path)
    assert nothing.code == 2
    assert "not waiting for a decision" in nothing.stderr

    bad = await run_cli("chat", "hi", env=env | {"DUCK_MAX_ACTION_STEPS": "lots"}, cwd=tmp_path)
    assert bad.code == 2
    assert "DUCK_MAX_ACTION_STEPS" in bad.stderr


async def test_approvals_list_and_revoke(
    settings: Settings, llm: ScriptedLLM, workspace: Path, tmp_path: Path
) -> None:
    await asyncio.to_thread((workspace / "a.txt").write_text, "old")
    env = cli_env(settings)
    llm.script(reply(tool_calls=[call("file_write", path="a.txt", content="new", overwrite=True)]))
    await run_cli(
        "chat", "overwrite", "--thread", "T2", "--no-critic", "--no-memory", env=env, cwd=tmp_path
    )
    llm.script(reply("ok"))
    done = await run_cli(
        "resume",
        "T2",
        "--decision",
        "allow_forever",
        "--no-critic",
        "--no-memory",
        env=env,
        cwd=tmp_path,
    )
    assert done.code == 0, done.stderr

    listed = await run_cli("approvals", "list", "--json", env=env, cwd=tmp_path)
    (rule,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert rule["pattern"] == "overwrite:a.txt"
    revoked = await run_cli("approvals", "revoke", str(rule["id"]), env=env, cwd=tmp_path)
    assert revoked.code == 0
    again = await run_cli("approvals", "revoke", str(rule["id"]), env=env, cwd=tmp_path)
    assert again.code == 2


async def test_doctor_reports_the_sandbox_and_the_model_server(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.set_default(reply("OK"))  # the doctor's one-token completion
    result = await run_cli("doctor", "--json", env=cli_env(settings), cwd=tmp_path)
    checks = {c["name"]: c for c in map(json.loads, result.stdout.splitlines())}
    assert checks["sandbox"]["ok"] is True
    assert checks["sandbox"]["detail"].startswith("bubblewrap")
    assert checks[f"model server {llm.base_url}"]["ok"] is True
    assert checks[f"completion at {llm.base_url}"]["ok"] is True
    assert checks["database"]["ok"] is True
    assert checks["database"]["detail"].startswith(f"SQLite file {settings.files.database}: 3.")
    assert result.code == 0, result.stdout


async def test_an_unreachable_database_is_a_clear_refusal(
    settings: Settings, unused_tcp_port: int, tmp_path: Path
) -> None:
    url = f"postgresql://duck:secret@127.0.0.1:{unused_tcp_port}/nowhere"
    env = cli_env(settings) | {"DUCK_DATABASE_URL": url}
    for command in (["threads"], ["serve", "--port", "0"]):
        result = await run_cli(*command, env=env, cwd=tmp_path)
        assert result.code == 2, result.stderr
        assert (
            f"cannot reach the PostgreSQL database duck@127.0.0.1:{unused_tcp_port}/nowhere: "
            "connection failed" in result.stderr
        )
        assert "Connection refused" in result.stderr
        assert "secret" not in result.stderr + result.stdout
        assert "Traceback" not in result.stderr


async def test_doctor_says_what_to_do_when_the_model_server_is_down(
    settings: Settings, unused_tcp_port: int, tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{unused_tcp_port}/v1"
    env = cli_env(settings) | {"DUCK_LLM_BASE_URL": url}
    result = await run_cli("doctor", env=env, cwd=tmp_path)
    assert result.code == 1
    assert f"[FAIL] model server {url}: not reachable" in result.stdout
    assert "fix: run `ducklm llama start`" in result.stdout


async def test_memory_and_skills_commands(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path, skills_dir: Path
) -> None:
    env = cli_env(settings) | {"DUCK_SKILLS_DIR": str(skills_dir)}
    added = await run_cli(
        "memory", "add", "My cat Miso is afraid of the vacuum", env=env, cwd=tmp_path
    )
    assert added.code == 0, added.stderr
    memory_id = added.stdout.split()[0]
    found = await run_cli(
        "memory", "search", "which pet fears cleaning machines", "--json", env=env, cwd=tmp_path
    )
    hits = [json.loads(line) for line in found.stdout.splitlines()]
    assert hits[0]["id"] == memory_id
    reindexed = await run_cli("memory", "reindex", env=env, cwd=tmp_path)
    assert "reindexed 1 memories" in reindexed.stderr
    deleted = await run_cli("memory", "delete", memory_id, env=env, cwd=tmp_path)
    assert deleted.code == 0
    listed = await run_cli("memory", "list", env=env, cwd=tmp_path)
    assert listed.stdout == ""
    skills = await run_cli("skills", "list", env=env, cwd=tmp_path)
    assert {line.split()[0] for line in skills.stdout.splitlines()} >= {
        "analyze_project",
        "fix_failing_test",
        "summarize_file",
        "tidy_workspace",
    }
    as_json = await run_cli("skills", "list", "--json", env=env, cwd=tmp_path)
    described = {s["id"]: s for s in map(json.loads, as_json.stdout.splitlines())}
    assert described.keys() == {line.split()[0] for line in skills.stdout.splitlines()}
    assert described["summarize_file"]["procedure"], "the whole skill, not only its name"
    new = NewProposal("Step 0: ask which file.", "summarize_file", "ask first", "t-1")
    written = await asyncio.to_thread(write_proposal, settings.files.skill_proposals, new)
    proposals = await run_cli("skills", "proposals", "--json", env=env, cwd=tmp_path)
    (listed,) = map(json.loads, proposals.stdout.splitlines())
    assert listed == written.model_dump(mode="json")
    missing = await run_cli("skills", "apply", "nope", env=env, cwd=tmp_path)
    assert missing.code == 2
    assert "no proposal 'nope'" in missing.stderr


async def test_a_thread_another_process_runs_is_refused(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    # A server beside the CLI runs the thread (its owner, this test process, is alive).
    async with open_operator_stores(settings) as other:
        await other.runs.start("run-elsewhere", "T9", "task-elsewhere")
    result = await run_cli(
        "chat", "hi", "--thread", "T9", "--no-critic", "--no-memory",
        env=cli_env(settings), cwd=tmp_path,
    )  # fmt: skip
    assert result.code == 2, result.stderr
    assert "ducklm: conversation 'T9' is already running a task" in result.stderr
    assert llm.requests == []
