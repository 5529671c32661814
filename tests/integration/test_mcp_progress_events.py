"""An MCP call's progress in a turn: `tool_progress` events, live only, and the CLI's line.

The real MCP server of tests/support/mcp_server.py over stdio reports progress three
times (`slow_with_progress`); the turn's events carry each report between the call's
start and its finish, under the call's id, and the audit log keeps none of them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ducklm.cli.console import ConsolePrinter, progress_words
from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from tests.support.mcp_servers import python_server, write_config
from tests.support.scripted_llm import ScriptedLLM, call, reply

QUIET = {"critic": False, "memory": False}


@pytest.fixture
def settings(settings: Settings, tmp_path: Path) -> Settings:
    config = write_config(tmp_path / "mcp.json", notes=python_server(trust="trusted"))
    return settings.model_copy(update={"mcp_config": config, "mcp_tool_tokens": 100_000})


@pytest.fixture
async def duck(settings: Settings) -> AsyncIterator[DuckLM]:
    async with DuckLM.open(settings) as runtime:
        yield runtime


async def test_progress_reports_become_tool_progress_events(duck: DuckLM, llm: ScriptedLLM) -> None:
    slow = call("notes__slow_with_progress", steps=3, pause_s=0.3)
    llm.script(reply(tool_calls=[slow]))
    asked = await duck.run("run the slow job", thread_id="t1", **QUIET)
    assert asked.status == "interrupted"  # not read-only: the person approves it first
    llm.script(reply("It finished."))
    result = await duck.resume_run("t1", [{"type": "approve"}], **QUIET)
    assert result.answer == "It finished."

    types = [e["type"] for e in result.events]
    progress = [e for e in result.events if e["type"] == "tool_progress"]
    assert [(e["progress"], e["total"], e["message"]) for e in progress] == [
        (1, 3, "step 1"),
        (2, 3, "step 2"),
        (3, 3, "step 3"),
    ]
    started = types.index("tool_call_started")
    assert started < types.index("tool_progress") < types.index("tool_call_finished")
    (finished,) = [e for e in result.events if e["type"] == "tool_call_finished"]
    for item in progress:
        assert item["call_id"] == finished["call_id"]
        assert (item["tool"], item["server"], item["mcp_tool"]) == (
            "notes__slow_with_progress",
            "notes",
            "slow_with_progress",
        )
    audited = {record.type for record in await duck.events("t1")}
    assert "tool_call_finished" in audited and "tool_progress" not in audited


def test_ducklm_chat_prints_a_progress_line(capsys: pytest.CaptureFixture[str]) -> None:
    item = {"type": "tool_progress", "tool": "notes__slow", "progress": 2, "total": 3}
    ConsolePrinter(as_json=False).show({**item, "message": "step 2"})
    assert capsys.readouterr().err == "   notes__slow: step 2 of 3: step 2\n"
    assert progress_words({"progress": 3, "total": 10, "message": "reading"}) == (
        "step 3 of 10: reading"
    )
    assert progress_words({"progress": 3, "total": 10, "message": "reading"}) == (
        "step 3 of 10: reading"
    )
    assert progress_words({"progress": 0.25, "total": 1.0}) == "25%"
    assert progress_words({"progress": 7, "total": None}) == "7 done"
