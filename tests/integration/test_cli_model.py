"""`ducklm chat --model NAME`: the conversation answers with a model the server offers.

The real command, in-process and beside a real `ducklm serve`, on the scripted server
offering two models: the chosen name is in the answer's requests and kept for the
conversation's next message; a name the server does not offer is refused (exit code 2)
with the ones it does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ducklm.config.settings import Settings
from tests.support.cli import cli_env, run_cli, serving
from tests.support.scripted_llm import ScriptedLLM, reply

pytestmark = pytest.mark.slow

SWITCHES = ("--no-critic", "--no-memory")


@pytest.fixture
def env(settings: Settings, llm: ScriptedLLM) -> dict[str, str]:
    """Two models on offer; embeddings from the scripted server (no MiniLM per process)."""
    llm.models = ["scripted", "bigger"]
    llm.set_default(reply("Quack."))
    return {**cli_env(settings), "DUCK_EMBEDDINGS_URL": llm.base_url}


def _answering_models(llm: ScriptedLLM, since: int) -> set[str]:
    return {r["model"] for r in llm.requests[since:] if r.get("stream")}


async def _chat(env: dict[str, str], cwd: Path, llm: ScriptedLLM, *args: str) -> set[str]:
    since = len(llm.requests)
    result = await run_cli("chat", *args, *SWITCHES, env=env, cwd=cwd)
    assert result.code == 0, result.stderr
    assert result.stdout == "Quack.\n"
    return _answering_models(llm, since)


async def test_chat_model_in_process_and_kept_for_the_thread(
    env: dict[str, str], llm: ScriptedLLM, tmp_path: Path
) -> None:
    assert await _chat(env, tmp_path, llm, "hi", "--thread", "T-1", "--model", "bigger") == {
        "bigger"
    }
    assert await _chat(env, tmp_path, llm, "again", "--thread", "T-1") == {"bigger"}
    assert await _chat(env, tmp_path, llm, "elsewhere", "--thread", "T-2") == {"local"}

    refused = await run_cli("chat", "hi", "--model", "gpt-9", *SWITCHES, env=env, cwd=tmp_path)
    assert refused.code == 2
    assert "unknown model 'gpt-9'" in refused.stderr
    assert "offers scripted, bigger" in refused.stderr


async def test_chat_model_through_the_server(
    env: dict[str, str], llm: ScriptedLLM, tmp_path: Path
) -> None:
    # The command's own model URL answers nobody: only the server could have asked a model.
    thin = {**env, "DUCK_LLM_BASE_URL": "http://127.0.0.1:9/v1"}
    async with serving(env, tmp_path, limit_s=120):
        models = await _chat(thin, tmp_path, llm, "hi", "--thread", "T-s", "--model", "bigger")
        assert models == {"bigger"}
        assert await _chat(thin, tmp_path, llm, "again", "--thread", "T-s") == {"bigger"}
        refused = await run_cli("chat", "hi", "--model", "gpt-9", *SWITCHES, env=thin, cwd=tmp_path)
    assert refused.code == 2
    assert "unknown model 'gpt-9'" in refused.stderr, refused.stderr
