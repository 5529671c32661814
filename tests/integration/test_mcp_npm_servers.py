"""The real npm MCP servers (filesystem, everything) over stdio, through the CLI and the graph.

The "done when" of the MCP issue: with an `mcp.json` naming the filesystem server,
`ducklm chat "list the files in /some/dir"` uses it, asks first, and the answer uses its
output; a trusted read-only tool runs unasked; `ducklm mcp list|tools|check`. The
everything server also in a turn over streamable HTTP (a 2025-11-25 server: DuckLM's
`server/discover` falls back to the handshake).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from tests.support.cli import cli_env, run_cli
from tests.support.mcp_servers import npm_server, write_config
from tests.support.scripted_llm import ScriptedLLM, call, reply

QUIET = ("--no-critic", "--no-memory")


@pytest.fixture
def some_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "some_dir"
    folder.mkdir()
    (folder / "ducks.txt").write_text("quack\n")
    (folder / "geese.md").write_text("honk\n")
    return folder


@pytest.fixture
def settings(settings: Settings, tmp_path: Path, some_dir: Path) -> Settings:
    config = write_config(
        tmp_path / "mcp.json",
        # DuckLM offers its working folder as the MCP root, and the filesystem server
        # serves its roots rather than its arguments when the client has roots.
        fs={**npm_server("server-filesystem", str(some_dir)), "cwd": str(some_dir)},
        everything=npm_server("server-everything", trust="trusted"),
        gone={"command": str(tmp_path / "missing-server")},
    )
    return settings.model_copy(update={"mcp_config": config, "mcp_tool_tokens": 100_000})


@pytest.fixture
def env(settings: Settings) -> dict[str, str]:
    assert settings.mcp_config is not None
    return cli_env(settings) | {
        "DUCK_MCP_CONFIG": str(settings.mcp_config),
        "DUCK_MCP_TOOL_TOKENS": "100000",  # capped by the input budget
    }


async def test_chat_lists_a_folder_through_the_filesystem_server_asking_first(
    llm: ScriptedLLM, env: dict[str, str], tmp_path: Path, some_dir: Path
) -> None:
    listing = call("fs__list_directory", path=str(some_dir))
    llm.script(reply(tool_calls=[listing]))
    asked = await run_cli(
        "chat",
        f"list the files in {some_dir}",
        "--thread",
        "T1",
        "--json",
        *QUIET,
        env=env,
        cwd=tmp_path,
        limit_s=240,
    )
    assert asked.code == 3, asked.stdout + asked.stderr
    (question,) = [e for e in asked.events() if e["type"] == "approval_requested"]
    (request,) = question["request"]["action_requests"]
    assert request["name"] == "fs__list_directory"
    assert request["description"] == "list_directory on the MCP server fs (untrusted)"

    llm.script(reply("There are ducks.txt and geese.md."))
    done = await run_cli(
        "resume",
        "T1",
        "--decision",
        "approve",
        "--json",
        *QUIET,
        env=env,
        cwd=tmp_path,
        limit_s=240,
    )
    assert done.code == 0, done.stderr
    finished = next(e for e in done.events() if e["type"] == "tool_call_finished")
    assert (finished["server"], finished["mcp_tool"]) == ("fs", "list_directory")
    assert "[FILE] ducks.txt" in finished["output"] and "[FILE] geese.md" in finished["output"]
    # The answer was written from the server's output: the model saw it.
    assert "[FILE] ducks.txt" in llm.requests[-1]["messages"][-1]["content"]
    assert done.events()[-1]["answer"] == "There are ducks.txt and geese.md."
    # Its result was untrusted: the conversation says so.
    assert any(e["type"] == "conversation_untrusted" for e in done.events())


async def test_mcp_commands_list_tools_and_check(env: dict[str, str], tmp_path: Path) -> None:
    listed = await run_cli("mcp", "list", "--json", env=env, cwd=tmp_path, limit_s=240)
    assert listed.code == 0, listed.stderr
    rows = {r["name"]: r for r in map(json.loads, listed.stdout.splitlines())}
    assert rows["fs"]["state"] == "running" and rows["fs"]["tools"] > 5
    assert rows["everything"]["trust"] == "trusted"
    assert rows["gone"]["state"] == "failed" and "program not found" in rows["gone"]["error"]

    tools = await run_cli("mcp", "tools", "--json", env=env, cwd=tmp_path, limit_s=240)
    by_name = {t["name"]: t for t in map(json.loads, tools.stdout.splitlines())}
    read = by_name["fs__read_text_file"]
    assert (read["server"], read["annotations"]["readOnlyHint"]) == ("fs", True)
    assert by_name["fs__write_file"]["annotations"]["destructiveHint"] is True
    assert by_name["everything__echo"]["description"]

    checked = await run_cli("mcp", "check", env=env, cwd=tmp_path, limit_s=240)
    assert checked.code == 1
    assert (
        "[ok  ] fs:" in checked.stdout
        and "[FAIL] gone: MCP server 'gone' did not start" in checked.stdout
    )


async def test_a_bad_config_is_a_startup_error_naming_server_and_field(
    env: dict[str, str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    await asyncio.to_thread(
        bad.write_text, json.dumps({"mcpServers": {"fs": {"command": "x", "trust": "maybe"}}})
    )
    result = await run_cli(
        "chat", "hi", *QUIET, env=env | {"DUCK_MCP_CONFIG": str(bad)}, cwd=tmp_path, limit_s=240
    )
    assert result.code == 2
    assert f"{bad}: server 'fs': trust: Input should be 'untrusted' or 'trusted'" in result.stderr


@pytest.fixture
async def duck(settings: Settings) -> AsyncIterator[DuckLM]:
    async with DuckLM.open(settings) as runtime:
        yield runtime


async def test_everything_server_annotations_decide(duck: DuckLM, llm: ScriptedLLM) -> None:
    assert not duck.context.mcp.tools(), "no server runs before the first turn"
    # get-sum says readOnlyHint and not openWorldHint; on a trusted server it runs unasked.
    llm.script(reply(tool_calls=[call("everything__get-sum", a=2, b=3)]), reply("Five."))
    result = await duck.run("what is 2 + 3?", thread_id="t1", critic=False, memory=False)
    assert result.status == "completed" and not result.pending
    finished = next(e for e in result.events if e["type"] == "tool_call_finished")
    assert (finished["approved_by"], finished["server"]) == ("policy", "everything")
    assert "5" in finished["output"]
    assert not any(e["type"] == "conversation_untrusted" for e in result.events), "trusted"

    # A tool that changes the server's state asks, trusted server or not.
    llm.script(reply(tool_calls=[call("everything__toggle-simulated-logging")]))
    toggled = await duck.run("turn on logging", thread_id="t2", critic=False, memory=False)
    (question,) = toggled.pending[0]["request"]["action_requests"]
    assert (
        question["description"] == "toggle-simulated-logging on the MCP server everything (trusted)"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_everything_server_over_streamable_http_in_a_turn(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    entry = (await asyncio.to_thread(npm_server, "server-everything"))["args"][0]
    port = _free_port()
    server = await asyncio.create_subprocess_exec(
        "node",
        entry,
        "streamableHttp",
        env={**os.environ, "PORT": str(port)},
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert server.stderr is not None
        async with asyncio.timeout(60):
            while b"listening on port" not in await server.stderr.readline():
                pass
        url = f"http://127.0.0.1:{port}/mcp"
        config = await asyncio.to_thread(
            write_config, tmp_path / "http.json", everything={"url": url, "trust": "trusted"}
        )
        async with DuckLM.open(settings.model_copy(update={"mcp_config": config})) as duck:
            llm.script(reply(tool_calls=[call("everything__get-sum", a=2, b=3)]), reply("Five."))
            result = await duck.run("what is 2 + 3?", thread_id="t1", critic=False, memory=False)
            assert result.status == "completed" and not result.pending
            finished = next(e for e in result.events if e["type"] == "tool_call_finished")
            assert (finished["server"], finished["status"]) == ("everything", "success")
            assert "5" in finished["output"]
            (running,) = duck.context.mcp.servers
            assert running.revision == "2025-11-25"
    finally:
        server.terminate()
        await server.wait()
