"""`ducklm serve`, `ducklm open` and `ducklm token` as a person runs them."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import httpx
import pytest

from ducklm.config.settings import Settings
from tests.support.cli import announced_urls, cli_env, run_cli, serving

pytestmark = pytest.mark.slow


async def test_serve_prints_its_address_and_stops_cleanly(
    settings: Settings, tmp_path: Path
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ducklm.cli.main", "serve", "--port", "0",
        env=cli_env(settings), cwd=tmp_path, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        url, login = await asyncio.wait_for(announced_urls(proc.stderr), 60)
        token = (await run_cli("token", env=cli_env(settings), cwd=tmp_path)).stdout.strip()
        async with await asyncio.to_thread(httpx.AsyncClient, base_url=url) as client:
            assert (await client.get("/health")).status_code == 200
            status = await client.get("/v1/status", headers={"Authorization": f"Bearer {token}"})
            assert status.status_code == 200
            assert status.json()["data_dir"] == str(settings.data_dir)
            assert token not in (await client.get("/")).text
            await _logs_in(client, login)
        running = await _server_file(settings)
        assert running["content"] == {"url": url, "pid": proc.pid}
        assert running["mode"] == 0o600
    finally:
        proc.send_signal(signal.SIGINT)
        rest = (await asyncio.wait_for(proc.stderr.read(), 30)).decode()
        code = await asyncio.wait_for(proc.wait(), 30)
    assert "Application shutdown complete" in rest  # the lifespan closed the stores
    assert code == 130  # Ctrl-C, as a shell reports it
    assert not await asyncio.to_thread((settings.data_dir / "server.json").exists)


@pytest.mark.parametrize("host", ["0.0.0.0", "127.evil.com", "127.0.0.1.evil.com"])
async def test_serve_refuses_a_public_address_without_a_token(
    settings: Settings, tmp_path: Path, host: str
) -> None:
    result = await run_cli("serve", "--host", host, env=cli_env(settings), cwd=tmp_path)
    assert result.code == 2
    assert "DUCK_API_TOKEN" in result.stderr


BROWSER_SCRIPT = """#!/bin/sh
printf '%s\\n' "$1" >> "$(dirname "$0")/opened.txt"
"""


async def test_serve_open_and_ducklm_open_log_the_browser_in(
    settings: Settings, tmp_path: Path
) -> None:
    env = {**cli_env(settings), "BROWSER": await _fake_browser(tmp_path)}
    opened = tmp_path / "opened.txt"
    async with serving(env, tmp_path, "--open") as (url, login):
        # serve --open opens it just after printing it
        assert (await asyncio.wait_for(_lines_when_written(opened), 30)) == [login]
        first = await run_cli("open", env=env, cwd=tmp_path)
        assert first.code == 0, first.stderr
        fresh = first.stdout.strip()
        assert fresh.startswith(f"{url}/login?code=")
        assert fresh != login
        assert (await _read_lines(opened)) == [login, fresh]
        only_print = await run_cli("open", "--no-browser", env=env, cwd=tmp_path)
        assert only_print.code == 0
        async with await asyncio.to_thread(httpx.AsyncClient, base_url=url) as client:
            for link in (login, fresh, only_print.stdout.strip()):
                await _logs_in(client, link)
        assert len(await _read_lines(opened)) == 2


async def test_ducklm_open_without_a_server_says_how_to_start_one(
    settings: Settings, tmp_path: Path
) -> None:
    result = await run_cli("open", env=cli_env(settings), cwd=tmp_path)
    assert result.code == 2
    assert "ducklm serve --open" in result.stderr


async def _logs_in(client: httpx.AsyncClient, login: str) -> None:
    """`login` opens a session: its cookie gets the chat instead of the login help."""
    client.cookies.clear()
    response = await client.get(login)
    assert response.status_code == 303, response.text
    assert "HttpOnly" in response.headers["set-cookie"]
    page = await client.get("/")  # the client's jar sends the new cookie
    assert "/ui/app.js" in page.text
    client.cookies.clear()


async def _fake_browser(tmp_path: Path) -> str:
    """A `BROWSER` command that notes each URL it is asked to open in opened.txt."""
    script = tmp_path / "browser.sh"
    await asyncio.to_thread(script.write_text, BROWSER_SCRIPT)
    await asyncio.to_thread(os.chmod, script, 0o755)
    return str(script)


async def _lines_when_written(path: Path) -> list[str]:
    # A file another process writes: nothing to wait on but the file itself.
    while not (await asyncio.to_thread(path.exists) and (lines := await _read_lines(path))):  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    return lines


async def _read_lines(path: Path) -> list[str]:
    return (await asyncio.to_thread(path.read_text)).splitlines()


async def _server_file(settings: Settings) -> dict[str, object]:
    path = settings.data_dir / "server.json"
    content = json.loads(await asyncio.to_thread(path.read_text))
    return {"content": content, "mode": (await asyncio.to_thread(path.stat)).st_mode & 0o777}
