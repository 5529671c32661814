"""The thin CLI: beside a running `ducklm serve`, conversation and memory commands go to it.

Every test runs the real `ducklm` command and a real `ducklm serve` subprocess on the
scripted model server. The commands are run once through the server and once in-process
(no server), and must print the same shapes with the same exit codes. To prove a command
went through the server, the CLI's own model URL points at a closed port: in-process it
could not have reached a model.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from ducklm.config.settings import Settings
from tests.support.cli import CliResult, cli_env, run_cli, run_cli_loading, serving
from tests.support.scripted_llm import Reply, ScriptedLLM, call, reply

pytestmark = pytest.mark.slow

SWITCHES = ("--no-critic", "--no-memory")
HEAVY = ("torch", "langgraph", "sentence_transformers", "qdrant_client", "ducklm.runtime.facade")


def respond(body: dict[str, Any]) -> Reply:
    """Replies by the request's last user message, so both runs get the same answers."""
    if body["messages"][-1].get("role") == "tool":
        return reply("Overwritten.")
    asked = next(m["content"] for m in reversed(body["messages"]) if m.get("role") == "user")
    if "overwrite" in asked:
        return reply(tool_calls=[call("file_write", path="a.txt", content="new", overwrite=True)])
    return reply("Quack quack.")


@pytest.fixture
def fast_env(settings: Settings, llm: ScriptedLLM) -> dict[str, str]:
    """Environment with embeddings from the scripted server (no MiniLM load per process)."""
    llm.set_responder(respond)
    return {**cli_env(settings), "DUCK_EMBEDDINGS_URL": llm.base_url}


def cut_off(env: dict[str, str]) -> dict[str, str]:
    """`env` with a model URL nobody answers: only a run on the server can succeed."""
    return {**env, "DUCK_LLM_BASE_URL": "http://127.0.0.1:9/v1"}


async def conversation(env: dict[str, str], cwd: Path, thread: str) -> list[CliResult]:
    """A chat, a JSON chat, a turn that waits for approval, then its resume."""
    return [
        await run_cli("chat", "hi", *SWITCHES, env=env, cwd=cwd),
        await run_cli("chat", "hi again", "--json", *SWITCHES, env=env, cwd=cwd),
        await run_cli(
            "chat", "overwrite a.txt", "--thread", thread, "--json", *SWITCHES, env=env, cwd=cwd
        ),
        await run_cli(
            "resume", thread, "--decision", "approve", "--json", *SWITCHES, env=env, cwd=cwd
        ),
    ]


def shape(result: CliResult) -> dict[str, Any]:
    """What must not depend on the path a command took: code, output, event types and keys."""
    if result.stdout.startswith("{"):
        events = [(e["type"], sorted(e)) for e in result.events()]
        return {"code": result.code, "events": events}
    ids = re.compile(r"[0-9a-f]{8}-[0-9a-f-]{27}|T-\w+")
    return {
        "code": result.code,
        "stdout": ids.sub("ID", result.stdout),
        "stderr": ids.sub("ID", result.stderr),
    }


async def test_conversation_through_the_server_matches_in_process(
    fast_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    target = workspace / "a.txt"
    await asyncio.to_thread(target.write_text, "old")
    async with serving(fast_env, tmp_path, limit_s=120):
        remote = await conversation(cut_off(fast_env), tmp_path, "T-server")
    assert await asyncio.to_thread(target.read_text) == "new"
    await asyncio.to_thread(target.write_text, "old")
    local = await conversation(fast_env, tmp_path, "T-local")

    assert [r.code for r in remote] == [0, 0, 3, 0], [r.stderr for r in remote]
    assert remote[0].stdout == "Quack quack.\n"
    assert remote[2].events()[-2]["type"] == "approval_requested"
    assert remote[3].events()[-1]["answer"] == "Overwritten."
    # The sandbox warning is the in-process runtime's, about the process that runs tools.
    for result in local:
        result.stderr = "\n".join(
            line for line in result.stderr.splitlines(keepends=True) if "warning:" not in line
        )
    assert [shape(r) for r in remote] == [shape(r) for r in local]
    assert await asyncio.to_thread(target.read_text) == "new"


async def test_resume_when_nothing_waits_is_bad_input_both_ways(
    fast_env: dict[str, str], tmp_path: Path
) -> None:
    async with serving(fast_env, tmp_path, limit_s=120):
        remote = await run_cli(
            "resume", "T-none", "--decision", "approve", env=fast_env, cwd=tmp_path
        )
    local = await run_cli("resume", "T-none", "--decision", "approve", env=fast_env, cwd=tmp_path)
    assert (remote.code, local.code) == (2, 2)
    assert "not waiting for a decision" in remote.stderr
    assert "not waiting for a decision" in local.stderr


async def memory_session(env: dict[str, str], cwd: Path) -> list[CliResult]:
    """Remember two facts, then search by meaning (no word shared with either)."""
    return [
        await run_cli("memory", "add", "The cat is called Whiskers", "--scope", "global",
                      env=env, cwd=cwd),
        await run_cli("memory", "add", "Deploys go out on Friday afternoons", "--scope", "global",
                      env=env, cwd=cwd),
        await run_cli("memory", "search", "name of my feline pet", "-k", "2", "--json",
                      env=env, cwd=cwd),
        await run_cli("memory", "list", "--json", env=env, cwd=cwd),
    ]  # fmt: skip


async def test_memory_through_the_server_is_searchable_by_meaning_at_once(
    settings: Settings, tmp_path: Path
) -> None:
    """The server's embedding model (MiniLM) encodes what `memory add` sends it."""
    env = cli_env(settings)
    async with serving(env, tmp_path, limit_s=120):
        remote = await memory_session(cut_off(env), tmp_path)
        first_id = remote[0].stdout.split()[0]
        deleted = await run_cli("memory", "delete", first_id, env=env, cwd=tmp_path)
        again = await run_cli("memory", "delete", first_id, env=env, cwd=tmp_path)
    assert [r.code for r in remote] == [0, 0, 0, 0], [r.stderr for r in remote]
    hits = remote[2].events()
    assert hits[0]["text"] == "The cat is called Whiskers"
    assert "warning" not in remote[2].stderr  # vectors, not a keyword fallback
    assert (deleted.code, deleted.stdout) == (0, f"deleted {first_id}\n")
    assert again.code == 2

    other = {**env, "DUCK_DATA_DIR": str(tmp_path / "data-local")}
    local = await memory_session(other, tmp_path)
    assert [r.code for r in local] == [0, 0, 0, 0]
    assert local[2].events()[0]["text"] == "The cat is called Whiskers"
    assert [sorted(h) for h in hits] == [sorted(h) for h in local[2].events()]
    assert [sorted(r) for r in remote[3].events()] == [sorted(r) for r in local[3].events()]


async def test_a_command_for_the_server_loads_no_graph_and_no_torch(
    fast_env: dict[str, str], tmp_path: Path
) -> None:
    async with serving(fast_env, tmp_path, limit_s=120):
        result, loaded = await run_cli_loading(
            HEAVY, "chat", "hi", *SWITCHES, env=cut_off(fast_env), cwd=tmp_path
        )
    assert result.code == 0, result.stderr
    assert result.stdout == "Quack quack.\n"
    assert loaded == []


async def test_a_stale_server_file_falls_back_to_in_process(
    fast_env: dict[str, str], settings: Settings, tmp_path: Path
) -> None:
    gone = await asyncio.create_subprocess_exec("true")
    await gone.wait()  # its pid names no process now
    await asyncio.to_thread(settings.data_dir.mkdir, parents=True, exist_ok=True)
    record = {"url": "http://127.0.0.1:9", "pid": gone.pid}
    await asyncio.to_thread((settings.data_dir / "server.json").write_text, json.dumps(record))
    result = await run_cli("chat", "hi", *SWITCHES, env=fast_env, cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert result.stdout == "Quack quack.\n"
