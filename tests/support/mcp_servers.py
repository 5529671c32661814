"""MCP servers for the tests: the small Python one, and the npm servers of tests/mcp_servers.

The npm servers are installed by `scripts/system-deps.sh --test` (`npm ci` in
tests/mcp_servers). Without them their tests skip, except under CI, where they fail.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON_SERVER = ROOT / "tests" / "support" / "mcp_server.py"
OAUTH_SERVER = ROOT / "tests" / "support" / "oauth_mcp_server.py"
NPM_SERVERS = ROOT / "tests" / "mcp_servers" / "node_modules" / "@modelcontextprotocol"


OLDER = "2025-11-25"
"""The revision before 2026-07-28: a server that knows no `server/discover`."""


def python_server(
    *, trust: str = "untrusted", revision: str | None = None, **extra: Any
) -> dict[str, Any]:
    """The config of tests/support/mcp_server.py over stdio (`revision`: pinned to it)."""
    args = [str(PYTHON_SERVER), *(["--revision", revision] if revision else [])]
    return {"command": sys.executable, "args": args, "trust": trust, **extra}


def npm_server(package: str, *args: str, trust: str = "untrusted") -> dict[str, Any]:
    """The config of an installed npm server (`server-filesystem`, `server-everything`)."""
    entry = NPM_SERVERS / package / "dist" / "index.js"
    if not entry.is_file():
        reason = f"{entry} is missing: run scripts/system-deps.sh --test (npm ci)"
        if os.environ.get("CI"):  # CI installs them: their absence there is a failure
            pytest.fail(reason)
        pytest.skip(reason)
    return {"command": "node", "args": [str(entry), *args], "trust": trust}


def write_config(path: Path, **servers: dict[str, Any]) -> Path:
    """Write an `mcp.json` naming `servers`; blocking (for sync fixtures)."""
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


@asynccontextmanager
async def http_server(
    env: dict[str, str] | None = None, revision: str | None = None
) -> AsyncIterator[str]:
    """The Python server over streamable HTTP on a free loopback port; yields its URL."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(PYTHON_SERVER),
        "--http",
        *(["--revision", revision] if revision else []),
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    try:
        assert process.stdout is not None
        port = int(await asyncio.wait_for(process.stdout.readline(), timeout=30))
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        if process.returncode is None:  # a test may have made it exit (`crash`)
            with suppress(ProcessLookupError):
                process.terminate()
        await process.wait()


@asynccontextmanager
async def oauth_server(ttl_s: int) -> AsyncIterator[str]:
    """tests/support/oauth_mcp_server.py (OAuth in front, tokens living `ttl_s`); its URL."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(OAUTH_SERVER), "--ttl", str(ttl_s), stdout=asyncio.subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        port = int(await asyncio.wait_for(process.stdout.readline(), timeout=60))
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        if process.returncode is None:  # a test may have made it exit (`crash`)
            with suppress(ProcessLookupError):
                process.terminate()
        await process.wait()
