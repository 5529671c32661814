"""`ducklm serve` stops within 10 s of a SIGTERM, whatever its tools are doing.

The real command, as a subprocess on a free port, with the scripted model server: one
conversation blocked in `sleep 600` in the sandbox, one in a file tool blocked in the
kernel (a FIFO opened without O_NONBLOCK, tests/support/hung_files.py's seam, set by the
wrapper below), one waiting at an approval, and the SSE streams of the first two open.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.operator import open_operator_stores
from tests.support.cli import announced_urls, cli_env
from tests.support.scripted_llm import ScriptedLLM, call, reply

pytestmark = pytest.mark.slow

TOKEN = "stop-test-token-0123456789"
QUIET = {"critic": False, "memory": False}
STOP_LIMIT_S = 10
SLEEP, SLEEP_TOO = "sleep 600.25", "sleep 600.5"  # odd lengths, to find the processes by
OVERWRITE = call("file_write", path="a.txt", content="new", overwrite=True)
SERVE = """
import os, sys
from ducklm.tools import files
files._READ_FLAGS &= ~os.O_NONBLOCK  # the seam: opening a FIFO blocks, as a hung mount
from ducklm.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


async def test_sigterm_stops_the_server_whatever_its_tools_do(
    settings: Settings, llm: ScriptedLLM, workspace: Path, tmp_path: Path
) -> None:
    await asyncio.to_thread(os.mkfifo, workspace / "pipe")
    await asyncio.to_thread((workspace / "a.txt").write_text, "old")
    env = {**cli_env(settings), "DUCK_API_TOKEN": TOKEN, "DUCK_FILE_TOOL_TIMEOUT_S": "600"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", SERVE, "serve", "--port", "0",
        env=env, cwd=tmp_path, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        url, _ = await asyncio.wait_for(announced_urls(proc.stderr), 60)
        async with AsyncExitStack() as streams:
            client = await streams.enter_async_context(await _client(url))
            hung = [
                await _streamed(streams, client, llm, _shell(SLEEP)),
                await _streamed(streams, client, llm, call("file_read", path="pipe")),
            ]
            llm.script(reply(tool_calls=[_shell(SLEEP_TOO)]))
            # A client waiting for the end of a hung run: it once held the shutdown for good.
            waiting = asyncio.create_task(client.post("/v1/chat", json={"message": "go", **QUIET}))
            streams.push_async_callback(_settled, waiting)
            hung.append(await _task_running(client, SLEEP_TOO, hung))
            llm.script(reply(tool_calls=[OVERWRITE]))
            asked = await client.post("/v1/chat", json={"message": "write", **QUIET})
            assert asked.json()["status"] == "interrupted", asked.text
            assert await _processes(SLEEP) and await _processes(SLEEP_TOO)

            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            rest = (await asyncio.wait_for(proc.stderr.read(), STOP_LIMIT_S + 5)).decode()
            code = await asyncio.wait_for(proc.wait(), STOP_LIMIT_S + 5)
            took = time.monotonic() - started
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert took < STOP_LIMIT_S, f"stopped after {took:.1f} s:\n{rest}"
    assert code == 130, rest
    assert "exiting now" not in rest, "the graceful path should have been enough here"
    assert not await _processes(SLEEP) and not await _processes(SLEEP_TOO)
    assert not await asyncio.to_thread((settings.data_dir / "server.json").exists)
    async with open_operator_stores(settings) as stores:  # recorded by the server itself
        assert [(await stores.tasks.get(t)).status for t in hung] == ["cancelled"] * 3  # type: ignore[union-attr]


def _shell(command: str) -> Any:
    return call("shell_exec", command=command, timeout_s=600)


async def _client(url: str) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    return await asyncio.to_thread(httpx.AsyncClient, base_url=url, headers=headers, timeout=30)


async def _streamed(
    streams: AsyncExitStack, client: httpx.AsyncClient, llm: ScriptedLLM, tool_call: Any
) -> str:
    """Start a task whose only call blocks (its id); its SSE stream stays open in `streams`."""
    llm.script(reply(tool_calls=[tool_call]))
    body = {"message": "go", **QUIET}
    response = await streams.enter_async_context(
        client.stream("POST", "/v1/chat/stream", json=body)
    )
    assert response.status_code == 200
    async with asyncio.timeout(60):
        async for item in _events(response.aiter_lines()):
            if item["type"] == "tool_call_started":
                break
    await asyncio.sleep(0.3)  # into the call itself
    return str(item["task_id"])


async def _task_running(client: httpx.AsyncClient, command: str, known: list[str]) -> str:
    """The id of the running task, not one of `known`, once its `command` runs."""
    async with asyncio.timeout(60):
        while not await _processes(command):  # noqa: ASYNC110  another process: no event
            await asyncio.sleep(0.1)
    tasks = (await client.get("/v1/tasks")).json()
    return next(
        str(t["task_id"]) for t in tasks if t["status"] == "running" and t["task_id"] not in known
    )


async def _settled(request: asyncio.Task[Any]) -> None:
    """Let a request the server's end cut off end (its error is the point)."""
    await asyncio.gather(request, return_exceptions=True)


async def _events(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    async for line in lines:
        if line.startswith("data:"):
            yield json.loads(line.removeprefix("data:"))


async def _processes(command: str) -> list[str]:
    proc = await asyncio.create_subprocess_exec(
        "pgrep", "-f", command, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    return out.decode().split()
