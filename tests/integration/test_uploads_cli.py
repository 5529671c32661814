"""An upload is the person's own act, undone by `ducklm undo` in another process; and
`ducklm search` finds a conversation by its title there too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from tests.support.cli import cli_env, run_cli

pytestmark = pytest.mark.slow


async def test_ducklm_undo_takes_the_last_upload_back(
    settings: Settings, workspace: Path, tmp_path: Path
) -> None:
    async with DuckLM.open(settings) as duck:
        made = await duck.conversations.create("T-up", title="Quarterly numbers", workspace=None)
        first = await duck.upload(made.id, "data/q1.csv", b"a,b\n1,2\n")
        second = await duck.upload(made.id, "data/q2.csv", b"a,b\n3,4\n")
    assert (first.action, second.action) == ("created", "created") and second.undo_id

    env = cli_env(settings)
    undone = await run_cli("undo", "T-up", "--json", env=env, cwd=tmp_path)
    assert undone.code == 0, undone.stderr
    assert json.loads(undone.stdout)["files"] == [{"path": "data/q2.csv", "action": "removed"}]
    assert not await asyncio.to_thread((workspace / "data" / "q2.csv").exists)
    # One upload at a time: the one before stays until undone on its own.
    assert await asyncio.to_thread((workspace / "data" / "q1.csv").read_bytes) == b"a,b\n1,2\n"

    found = await run_cli("search", "quarterly", "--json", env=env, cwd=tmp_path)
    assert found.code == 0, found.stderr
    (hit,) = json.loads(found.stdout)["hits"]
    assert (hit["conversation_id"], hit["kind"]) == ("T-up", "title")
