"""One conversation on every model server people run, played by the scripted server.

Each variant of `tests/support/server_matrix.py` copies one server's documented wire;
the settings are the same for all (the packaged `config/models.yaml`): what differs is
found from the server, not configured. Two turns in one thread, each with a tool call:
the answers are right and clean, the reasoning is shown and never sent back, nothing
fails, and the action role calls tools the way the server can take them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from ducklm.cli.doctor import check_models
from ducklm.config.settings import Settings
from ducklm.models.roles import load_roles
from ducklm.runtime.facade import DuckLM, RunResult
from tests.support.scripted_llm import ScriptedLLM
from tests.support.server import Served, stream
from tests.support.server_matrix import (
    FACTS,
    FILES,
    OLLAMA_NO_TOOLS,
    REASONING,
    REASONING_MARK,
    SEEN,
    TURNS,
    VARIANTS,
    VLLM_NO_PARSER,
    WRONG,
    Variant,
)


async def _conversation(duck: DuckLM, llm: ScriptedLLM) -> list[tuple[RunResult, int]]:
    """Each turn's result, and how many requests it made of the model."""
    turns: list[tuple[RunResult, int]] = []
    for request, _ in TURNS:
        thread = turns[-1][0].thread_id if turns else None
        before = len(llm.requests)
        result = await duck.run(request, thread_id=thread)
        turns.append((result, len(llm.requests) - before))
    return turns


def _texts(events: list[dict[str, Any]], type_: str) -> str:
    return "".join(e.get("text", "") for e in events if e["type"] == type_)


def _case(variant: Variant) -> Any:
    return pytest.param(variant, id=variant.name.split(" (")[0])


@pytest.mark.parametrize("variant", [_case(v) for v in VARIANTS])
async def test_two_turns_with_tool_calls_on_each_server(
    variant: Variant, llm: ScriptedLLM, duck: DuckLM, workspace: Path
) -> None:
    for name, text in FILES.items():
        await asyncio.to_thread((workspace / name).write_text, text)
    model = variant.install(llm)

    turns = await _conversation(duck, llm)
    results = [result for result, _ in turns]

    for (result, asked), name, fact in zip(turns, FILES, FACTS, strict=True):
        events = result.events
        assert result.status == "completed", [e for e in events if e["type"] == "error"]
        assert [e for e in events if e["type"] == "error"] == []
        assert fact in result.answer and result.answer not in WRONG.values(), result.answer
        (ran,) = [e for e in events if e["type"] == "tool_call_finished"]
        # The file's text (file_read), or the fact itself (a rule's `wc -l`).
        assert ran["status"] == "success", ran
        assert SEEN[name] in ran["output"] or fact in ran["output"], ran
        assert "<think" not in result.answer and "</think" not in _texts(events, "token")
        assert REASONING_MARK not in _texts(events, "token")
        if variant.reasons and asked:  # (a rule may answer with no model asked)
            assert REASONING in _texts(events, "reasoning"), "the reasoning is shown"
    # The reasoning stays out of the conversation the model is sent back.
    sent = [str(m.get("content")) for body in llm.requests for m in body.get("messages", [])]
    assert not [text for text in sent if REASONING_MARK in text]
    # Found, not configured: the same settings, the mode the server takes.
    assert duck.context.models.config("action").tool_mode == variant.tools_mode
    told = [e for r in results for e in r.events if e["type"] == "server_capability"]
    if variant.tools_mode == "json":
        assert len(told) == 1, "the chat is told once"
        assert (variant.refusal or "chat_template_caps") in told[0]["message"]
        assert "JSON directives" in told[0]["message"]
    else:
        assert told == []
    assert model.ignored == 0, "no request sent tools the server leaves out"
    assert model.refused <= 2, "a refusal is learned once, not met at every call"
    if variant.props is not None:
        assert llm.props_asked == 1, "one /props request for what it accepts and its window"
    # What its replies showed, found by the turn: usage when a stream asks, and reasoning.
    found = duck.context.capabilities.known(llm.base_url)
    assert found is not None
    streamed = [b for b in llm.requests if (b.get("stream_options") or {}).get("include_usage")]
    usage = (variant.wire.usage != "none") if streamed else None  # (JSON mode may not stream)
    assert found.of("include_usage").works is usage, found
    assert found.of("reasoning").works is (True if variant.reasons else None), found


OLLAMA = next(v for v in VARIANTS if v.refusal == OLLAMA_NO_TOOLS)


async def test_health_and_ping_show_what_a_turn_found(
    llm: ScriptedLLM, served: Served, workspace: Path
) -> None:
    """Ollama with a model without tools: the web chat is told in its words, /health keeps them."""
    await asyncio.to_thread((workspace / "notes.md").write_text, FILES["notes.md"])
    OLLAMA.install(llm)
    (before,) = (await served.client.get("/health")).json()["checks"]["model_servers"]
    assert before["capabilities"] is None, "nothing is probed before a turn uses the server"

    body = {"message": TURNS[0][0], "critic": False, "memory": False}
    events = await stream(served, "/v1/chat/stream", body)

    assert events[-1]["status"] == "completed" and events[-1]["answer"] == TURNS[0][1], events
    (told,) = [e for e in events if e["type"] == "server_capability"]
    assert OLLAMA_NO_TOOLS in told["message"]
    for path in ("/health", "/v1/models/ping"):
        answer = (await served.client.get(path)).json()
        (server,) = answer["checks"]["model_servers"] if path == "/health" else answer
        tools = server["capabilities"]["found"]["native_tools"]
        assert tools["works"] is False and OLLAMA_NO_TOOLS in tools["how"], server


VLLM = next(v for v in VARIANTS if v.refusal == VLLM_NO_PARSER)


async def test_the_doctor_names_what_the_server_accepts(
    llm: ScriptedLLM, settings: Settings
) -> None:
    VLLM.install(llm)
    roles = await asyncio.to_thread(load_roles, None, base_url=llm.base_url)
    checks = {c.name: c for c in await check_models(roles, settings)}
    found = checks[f"capabilities of {llm.base_url}"].detail
    assert f'native tool calls: no (it refused: "{VLLM_NO_PARSER}")' in found
    assert "so the action role writes JSON directives there" in found
    assert "response_format with a JSON schema: yes" in found
    assert "usage in a stream (stream_options.include_usage): yes" in found
    assert "reasoning output: yes" in found
    assert "GET /props: no" in found and "POST /tokenize: no" in found
