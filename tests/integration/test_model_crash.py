"""A local model server that crashes is named as crashed, everywhere a person looks.

The server is `tests/support/fake_llama_server.py` through `DUCK_LLAMA_SERVER_BIN`,
started as `ducklm llama start` starts llama-server (detached, under the supervisor). In
crash mode it answers `/v1/models` and dies of SIGILL on its first chat completion, as
llama-cpp-python built for another CPU did on a fresh machine (issue 12).
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import stat
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

import httpx
import pytest

from ducklm.cli.doctor import check_models, run_checks
from ducklm.config.settings import Settings
from ducklm.models.local import server as llama
from ducklm.models.local.autostart import local_server_for
from ducklm.models.local.crash import last_ending
from ducklm.models.local.keeper import RestartPolicy
from ducklm.models.roles import load_roles
from ducklm.runtime.facade import DuckLM
from tests.support.cli import cli_env, run_cli
from tests.support.fake_llama_server import Mode, fake_llama_bin

pytestmark = pytest.mark.slow

STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"
PORTABLE_FIX = "rebuild it portably: `scripts/install-llama.sh .venv/bin/python`"
WAIT_S = 30.0


def _free_port() -> int:
    # llama-server takes a port number and cannot report one it picked: find a free one.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def _local(settings: Settings, tmp_path: Path, mode: Mode) -> Settings:
    """`settings` with the fake server as DuckLM's local server, on a free port."""
    port = await asyncio.to_thread(_free_port)
    model = tmp_path / "fake-model.gguf"
    await asyncio.to_thread(model.write_bytes, b"GGUF")
    binary = await asyncio.to_thread(fake_llama_bin, tmp_path, mode)
    update = {"llm_base_url": llama.server_url(port), "llama_port": port,
              "llama_server_bin": str(binary), "llama_model": model}  # fmt: skip
    return settings.model_copy(update=update)


async def _started(settings: Settings) -> AsyncIterator[Settings]:
    await llama.start(settings, lambda _: None)
    try:
        yield settings
    finally:
        await llama.stop(settings, lambda _: None)


@pytest.fixture
async def crashing(settings: Settings, tmp_path: Path) -> AsyncIterator[Settings]:
    """Settings whose model server is the fake in crash mode, running."""
    async for running in _started(await _local(settings, tmp_path, "crash")):
        yield running


@pytest.fixture
async def healthy(settings: Settings, tmp_path: Path) -> AsyncIterator[Settings]:
    """Settings whose model server is the fake answering one token, running."""
    async for running in _started(await _local(settings, tmp_path, "healthy")):
        yield running


async def _crash(settings: Settings) -> None:
    """Ask the crashing server for a completion, and wait until its end is recorded."""
    assert settings.llm_base_url is not None
    client = await asyncio.to_thread(httpx.AsyncClient, timeout=10)
    async with client:
        with pytest.raises(httpx.TransportError):
            url = settings.llm_base_url + "/chat/completions"
            await client.post(url, json={"model": "local", "messages": []})
    await _until(lambda: _crashed(settings))


async def _crashed(settings: Settings) -> bool:
    ending = await last_ending(settings)
    return ending is not None and ending.crashed


async def _until(check: Callable[[], Coroutine[Any, Any, bool]]) -> None:
    async with asyncio.timeout(WAIT_S):
        while not await check():  # noqa: ASYNC110  other processes: nothing to await
            await asyncio.sleep(0.05)


async def test_a_run_says_the_model_server_crashed_and_what_to_do(crashing: Settings) -> None:
    async with DuckLM.open(crashing) as duck:
        result = await duck.run("hello", critic=False, memory=False)
    assert result.status == "failed"
    (error,) = [e for e in result.events if e["type"] == "error"]
    message = error["message"]
    assert re.match(rf"The local model server crashed \(SIGILL\) at {STAMP}: ", message), message
    assert "illegal instruction" in message
    assert PORTABLE_FIX in message
    assert "not reachable" not in message


async def test_status_and_logs_say_it_crashed(crashing: Settings, tmp_path: Path) -> None:
    await _crash(crashing)
    env = cli_env(crashing)
    status = await run_cli("llama", "status", env=env, cwd=tmp_path)
    assert status.code == 1
    assert re.match(rf"crashed \(SIGILL\) at {STAMP} \(pid \d+\)\n", status.stdout), status.stdout
    assert PORTABLE_FIX in status.stdout
    assert "  | fake-llama: an illegal instruction, now" in status.stdout, "the log's end"

    as_json = json.loads((await run_cli("llama", "status", "--json", env=env, cwd=tmp_path)).stdout)
    assert (as_json["running"], as_json["crashed"]) == (False, True)
    assert (as_json["ended"]["signal"], as_json["ended"]["label"]) == ("SIGILL", "crashed (SIGILL)")

    logs = await run_cli("llama", "logs", env=env, cwd=tmp_path)
    last = logs.stdout.splitlines()[-1]
    assert re.match(rf"=== {STAMP} ducklm: the server crashed: killed by SIGILL ", last), last

    for name in ("llama.pid", "llama.log", "llama.exit.json"):
        mode = (await asyncio.to_thread((crashing.data_dir / name).stat)).st_mode
        assert stat.S_IMODE(mode) == 0o600, name


async def test_doctor_reports_a_crash_during_its_one_token_completion(crashing: Settings) -> None:
    url = crashing.llm_base_url
    roles = await asyncio.to_thread(load_roles, None, base_url=url)
    checks = {c.name: c for c in await check_models(roles, crashing)}
    assert checks[f"model server {url}"].ok, "it listed its models, then crashed"
    completion = checks[f"completion at {url}"]
    assert not completion.ok
    assert re.fullmatch(
        rf"DuckLM's local server crashed \(SIGILL\) during a one-token completion at {STAMP}",
        completion.detail,
    )
    assert PORTABLE_FIX in completion.fix

    again = {c.name: c for c in await check_models(roles, crashing)}
    server = again[f"model server {url}"]
    assert not server.ok
    assert server.detail.startswith("DuckLM's local server crashed (SIGILL) at "), server.detail
    assert f"completion at {url}" not in again


async def test_doctor_times_a_one_token_completion(healthy: Settings) -> None:
    async with DuckLM.open(healthy) as duck:
        checks = {c.name: c for c in await run_checks(duck)}
    completion = checks[f"completion at {healthy.llm_base_url}"]
    assert completion.ok, completion
    assert re.fullmatch(r"one token from '.+' in \d+\.\d\d s", completion.detail)


async def test_serve_restarts_a_crashed_server_once_and_stops_on_a_crash_loop(
    settings: Settings, tmp_path: Path
) -> None:
    local = await _local(settings, tmp_path, "crash")
    said: list[str] = []
    policy = RestartPolicy(backoff_s=0.1, crash_window_s=60, poll_s=0.05)
    async with local_server_for(local, said.append, policy) as served:
        assert served.llm_base_url == local.llm_base_url
        first = await llama.running(local)
        assert first is not None

        await _crash(local)
        # Ready for the keeper too: a crash while it starts the server is another story.
        await _until(lambda: _said(said, "is ready", times=2))
        assert await _restarted(local, first.pid)
        (restart,) = [line for line in said if "restarting it" in line]
        assert restart.startswith("the local model server crashed (SIGILL) at "), restart
        assert PORTABLE_FIX in restart

        await _crash(local)
        await _until(lambda: _said(said, "crash loop"))
        (loop,) = [line for line in said if "crash loop" in line]
        assert "again" in loop
        assert PORTABLE_FIX in loop
        assert "DuckLM goes on serving" in loop
        await asyncio.sleep(0.5)  # many poll periods: no second restart comes
        assert await llama.running(local) is None
        assert len([line for line in said if "restarting it" in line]) == 1


async def _restarted(settings: Settings, old_pid: int) -> bool:
    record = await llama.running(settings)
    return record is not None and record.pid != old_pid and await llama.answers(record.url)


async def _said(said: list[str], words: str, times: int = 1) -> bool:
    return len([line for line in said if words in line]) >= times
