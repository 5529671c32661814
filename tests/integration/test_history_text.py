"""`ducklm history THREAD` tells a conversation as it happened, as separate processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from tests.support.cli import cli_env, run_cli
from tests.support.scripted_llm import ScriptedLLM, reply

pytestmark = pytest.mark.slow
QUIET = ("--no-critic", "--no-memory")


async def test_history_shows_answers_and_a_failed_turn_with_its_error(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    env = cli_env(settings)
    # Each `chat` loads the embedding model: on a busy machine that passes run_cli's 60 s.
    llm.script(reply("Hello."))
    assert (
        await run_cli("chat", "hi", "--thread", "H1", *QUIET, env=env, cwd=tmp_path, limit_s=240)
    ).code == 0
    # Nothing scripted: the model server answers with an error and the turn fails.
    await run_cli("chat", "and now?", "--thread", "H1", *QUIET, env=env, cwd=tmp_path, limit_s=240)

    shown = await run_cli("history", "H1", env=env, cwd=tmp_path)
    assert shown.code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[:2] == ["you: hi", "duck: Hello."]
    # The answer's facts: which model answered, how soon, how many tokens.
    assert lines[2].startswith("  (local · first token ") and lines[2].endswith(" tokens)")
    assert lines[3] == "you: and now?"
    (failed,) = lines[4:]
    assert failed.startswith("  failed: ") and len(failed) > len("  failed: ")


async def test_history_tells_the_branch_shown_after_a_regenerate_and_a_switch_back(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    # Answers of 2 and 7 words: the scripted server counts words as tokens.
    llm.script(reply("First answer."), reply("A second and much longer answer here."))
    async with DuckLM.open(settings) as duck:
        done = await duck.run("hi", thread_id="B1", critic=False, memory=False)
        assert done.status == "completed"
        (turn,) = await duck.branches.turns("B1")
        events = duck.fork("B1", turn.checkpoint_id, critic=False, memory=False)
        assert [e async for e in events][-1]["type"] == "done"
        await duck.switch_branch("B1", turn.checkpoint_id)  # back to the first version

    shown = await run_cli("history", "B1", env=cli_env(settings), cwd=tmp_path)
    assert shown.code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[:2] == ["you: hi", "duck: First answer."], lines
    # The facts are the first version's: the second one answered on the other branch.
    assert len(lines) == 3 and " 2 tokens" in lines[2], lines
