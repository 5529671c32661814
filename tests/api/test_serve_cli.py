"""`ducklm serve` and `ducklm token` as a person runs them."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from pathlib import Path

import httpx
import pytest

from ducklm.settings import Settings
from tests.support.cli import cli_env, run_cli

pytestmark = pytest.mark.slow


async def test_serve_prints_its_address_and_stops_cleanly(
    settings: Settings, tmp_path: Path
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ducklm.cli", "serve", "--port", "0",
        env=cli_env(settings), cwd=tmp_path, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        url = await asyncio.wait_for(_announced_url(proc.stderr), 60)
        token = (await run_cli("token", env=cli_env(settings), cwd=tmp_path)).stdout.strip()
        async with await asyncio.to_thread(httpx.AsyncClient, base_url=url) as client:
            assert (await client.get("/health")).status_code == 200
            status = await client.get("/v1/status", headers={"Authorization": f"Bearer {token}"})
            assert status.status_code == 200
            assert status.json()["data_dir"] == str(settings.data_dir)
    finally:
        proc.send_signal(signal.SIGINT)
        rest = (await asyncio.wait_for(proc.stderr.read(), 30)).decode()
        code = await asyncio.wait_for(proc.wait(), 30)
    assert "Application shutdown complete" in rest  # the lifespan closed the stores
    assert code == 130  # Ctrl-C, as a shell reports it


async def test_serve_refuses_a_public_address_without_a_token(
    settings: Settings, tmp_path: Path
) -> None:
    result = await run_cli("serve", "--host", "0.0.0.0", env=cli_env(settings), cwd=tmp_path)
    assert result.code == 2
    assert "DUCK_API_TOKEN" in result.stderr


async def _announced_url(stderr: asyncio.StreamReader) -> str:
    while line := (await stderr.readline()).decode():
        if found := re.search(r"web chat at (http://\S+)/", line):
            return found.group(1)
    raise AssertionError("ducklm serve ended without saying where it serves")
