"""The MCP revision agreed with each configured server, where a person looks for it.

`ducklm doctor` and `ducklm mcp list` name it per server: 2026-07-28 with a current
server, 2025-11-25 with one that knows no `server/discover` (the Python test server
pinned to it), and why not for one that does not start.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from ducklm.cli.doctor import run_checks
from ducklm.cli.mcp import cmd_mcp_list
from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from tests.support.mcp_servers import OLDER, python_server, write_config
from tests.support.scripted_llm import ScriptedLLM, reply

pytestmark = pytest.mark.slow

CURRENT = "2026-07-28"


@pytest.fixture
def settings(settings: Settings, llm: ScriptedLLM, tmp_path: Path) -> Settings:
    config = write_config(
        tmp_path / "mcp.json",
        current=python_server(),
        older=python_server(revision=OLDER),
        gone={"command": str(tmp_path / "missing-server")},
    )
    # The scripted server's embeddings: memory needs no local model.
    return settings.model_copy(update={"mcp_config": config, "embeddings_url": llm.base_url})


async def test_the_doctor_names_each_servers_revision(settings: Settings, llm: ScriptedLLM) -> None:
    llm.set_default(reply("OK"))  # the doctor's one-token completion
    async with DuckLM.open(settings) as duck:
        checks = {c.name: c for c in await run_checks(duck)}
    current, older = checks["MCP server current"], checks["MCP server older"]
    assert current.ok and current.detail.startswith(f"MCP {CURRENT} over stdio, "), current
    assert older.ok and older.detail.startswith(f"MCP {OLDER} over stdio, "), older
    gone = checks["MCP server gone"]
    assert not gone.ok and "did not start" in gone.detail, gone
    assert str(settings.files.mcp_logs / "gone.log") in gone.fix


async def test_mcp_list_names_each_servers_revision(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    # In this process: the command's own code, without a `ducklm` process's start.
    assert await cmd_mcp_list(settings, argparse.Namespace(json=False)) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()}
    # name, transport, trust, state, revision, tools
    assert rows["current"][3:5] == ["running", CURRENT], rows
    assert rows["older"][3:5] == ["running", OLDER], rows
    assert rows["gone"][3:5] == ["failed", "-"], rows
