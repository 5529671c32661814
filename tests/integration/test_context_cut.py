"""The served context window bounds every request, and a cut prompt is said and retried.

Real HTTP to the scripted OpenAI-compatible server, which plays llama-server's `/props`
(`ScriptedLLM.props`) and a server that read fewer prompt tokens than it was sent
(`ScriptedLLM.count_prompt`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ducklm.cli.doctor import check_models
from ducklm.config.settings import Settings
from ducklm.models.clients import make_chat_model
from ducklm.models.context_size import input_budget
from ducklm.models.prompt_usage import prompt_seen
from ducklm.models.roles import RoleConfig, load_roles
from ducklm.models.tokens import estimate_tokens
from ducklm.models.wire import PromptRead
from ducklm.runtime.facade import DuckLM
from ducklm.turn.prompting.budget import MESSAGE_OVERHEAD_TOKENS, REQUEST_CUT
from ducklm.turn.prompting.context_cut import prompt_report
from tests.support.scripted_llm import ScriptedLLM, call, reply

# About 3,000 estimated tokens: with the tools (1,442) within the default budget (6,144),
# over a 4,096 window's (3,456).
LONG_REQUEST = "Please read this carefully. " + " ".join(f"ledger{n} ok" for n in range(500))
# About 8,000: with a budget of 12,000, a server can cut it to a window that still holds
# the tools.
HUGE_REQUEST = "Please read this carefully. " + " ".join(f"ledger{n} ok" for n in range(1300))


def cost(body: dict[str, Any]) -> int:
    """DuckLM's own count of a request as sent: every message, and the tools' schemas."""
    messages = sum(
        estimate_tokens(str(m.get("content") or "")) + MESSAGE_OVERHEAD_TOKENS
        for m in body["messages"]
    )
    return messages + estimate_tokens(json.dumps(body.get("tools", [])))


def action_requests(llm: ScriptedLLM) -> list[dict[str, Any]]:
    """The action role's requests (they carry tools), not sys_util's route question."""
    return [body for body in llm.requests if "tools" in body]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


@pytest.fixture
def settings(settings: Settings, llm: ScriptedLLM) -> Settings:
    # The rules leave a long request's route to sys_util: one step, no code.
    route = json.dumps({"multi_step": False, "code": False, "reason": "one step"})
    llm.set_schema_replies({"RouteAnswer": reply(route)})
    return settings


@pytest.fixture
async def duck(settings: Settings) -> AsyncIterator[DuckLM]:
    async with DuckLM.open(settings) as runtime:
        yield runtime


async def test_props_shrink_the_budget_to_the_served_window(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.props = {"default_generation_settings": {"n_ctx": 4096}}
    llm.script(reply("Noted."))
    result = await duck.run(LONG_REQUEST, critic=False, memory=False)

    assert result.status == "completed"
    [sent] = action_requests(llm)
    window = input_budget(duck.settings.max_input_tokens, 4096, 512)
    assert window < duck.settings.max_input_tokens
    assert cost(sent) <= window, "the request fits the window the server serves"
    assert REQUEST_CUT.strip() in sent["messages"][-1]["content"]
    served = await duck.context.context_sizes.window(
        duck.context.models.config("action"), duck.settings.ctx_size
    )
    assert (served.tokens, served.source) == (4096, "props")
    assert not [e for e in result.events if e["type"] == "context_cut"]


async def test_without_props_the_configured_size_stands(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.script(reply("Noted."))
    result = await duck.run(LONG_REQUEST, critic=False, memory=False)

    assert result.status == "completed"
    [sent] = action_requests(llm)
    assert sent["messages"][-1]["content"] == LONG_REQUEST, "sent whole: it fits 6,144"
    assert cost(sent) > input_budget(duck.settings.max_input_tokens, 4096, 512)
    served = await duck.context.context_sizes.window(
        duck.context.models.config("action"), duck.settings.ctx_size
    )
    assert (served.tokens, served.source) == (duck.settings.ctx_size, "DUCK_CTX_SIZE")


async def test_the_models_file_gives_the_window_of_a_server_that_does_not_say(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    models = tmp_path / "models.yaml"
    text = f"defaults: {{base_url: {llm.base_url}, model: m, context_tokens: 4096}}\n"
    await asyncio.to_thread(models.write_text, text)
    async with DuckLM.open(settings.model_copy(update={"models_config": models})) as duck:
        llm.script(reply("Noted."))
        await duck.run(LONG_REQUEST, critic=False, memory=False)
    [sent] = action_requests(llm)
    assert cost(sent) <= input_budget(settings.max_input_tokens, 4096, 512)
    assert REQUEST_CUT.strip() in sent["messages"][-1]["content"]


async def test_a_cut_prompt_is_said_and_asked_again_smaller(
    settings: Settings, llm: ScriptedLLM
) -> None:
    """The first request is read as 3,000 tokens of about 9,800 sent, and llama-server's
    `truncated` says it was cut (a usage count alone is not trusted at first: see
    tests/integration/test_wire_variants.py)."""

    def count_prompt(body: dict[str, Any]) -> int:
        return 3000 if len(action_requests(llm)) == 1 else cost(body)

    llm.count_prompt = count_prompt
    llm.script(
        reply(tool_calls=[call("list_dir")], truncated=True),
        reply(tool_calls=[call("list_dir")]),
        reply("Nothing here."),
    )
    roomy = settings.model_copy(update={"ctx_size": 16_384, "max_input_tokens": 12_000})
    async with DuckLM.open(roomy) as duck:
        result = await duck.run(HUGE_REQUEST, critic=False, memory=False)
        served = await duck.context.context_sizes.window(
            duck.context.models.config("action"), roomy.ctx_size
        )

    assert result.status == "completed"
    assert result.answer == "Nothing here."
    [cut] = [e for e in result.events if e["type"] == "context_cut"]
    assert cut["role"] == "action" and cut["action"] == "retried_smaller"
    assert cut["seen"] == 3000 and cut["sent"] > 9000
    assert (cut["served_context"], cut["served_source"]) == (16_384, "DUCK_CTX_SIZE")
    first, retry, after_tool = action_requests(llm)
    assert cost(retry) < cost(first) / 2
    assert tool_names(retry) == tool_names(first), "the tools are the last thing given up"
    # What the server kept is now its window: the next call fits it too.
    assert cost(after_tool) <= input_budget(roomy.max_input_tokens, 3000, 512)
    assert (served.tokens, served.source) == (3000, "cut")


async def test_an_answer_already_streamed_is_not_asked_again(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    llm.count_prompt = lambda body: 1000  # of about 4,800 sent
    llm.script(reply("Here is what I found.", truncated=True))
    result = await duck.run(LONG_REQUEST, critic=False, memory=False)

    assert result.answer == "Here is what I found."
    assert len(action_requests(llm)) == 1
    [cut] = [e for e in result.events if e["type"] == "context_cut"]
    assert cut["action"] == "next_smaller"


async def test_the_doctor_says_the_served_window(settings: Settings, llm: ScriptedLLM) -> None:
    llm.props = {"default_generation_settings": {"n_ctx": 4096}}
    llm.set_default(reply("OK"))  # the doctor's one-token completion
    roles = await asyncio.to_thread(load_roles, base_url=llm.base_url)
    checks = {c.name: c for c in await check_models(roles, settings)}
    context = checks[f"context at {llm.base_url}"]
    assert context.ok
    assert context.detail == (
        "4096 tokens, from its /props; the thinker role's requests are packed to 3456 "
        "tokens, under DUCK_MAX_INPUT_TOKENS"
    )
    llm.props = None  # asked again by a new doctor: a server that does not say
    checks = {c.name: c for c in await check_models(roles, settings)}
    assert checks[f"context at {llm.base_url}"].detail == (
        "8192 tokens, from DUCK_CTX_SIZE (the server does not say)"
    )


COMPLETION = {"id": "c1", "created": 0, "model": "m", "system_fingerprint": None}
USAGE = {"prompt_tokens": 4000, "completion_tokens": 1, "total_tokens": 4001}


async def test_llama_servers_own_fields_reach_the_reply(llm: ScriptedLLM) -> None:
    """`truncated` and `timings`, which langchain-openai drops, as llama-server sends them."""
    message = {"role": "assistant", "content": "hi"}
    whole = {
        **COMPLETION,
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": USAGE,
        "truncated": True,
        "timings": {"prompt_n": 10, "cache_n": 3990},
    }
    delta = {"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}
    chunks = [
        {**COMPLETION, "object": "chat.completion.chunk", "choices": [delta], "truncated": True},
        {**COMPLETION, "object": "chat.completion.chunk", "choices": [], "usage": USAGE},
    ]
    stream = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    llm.script(reply(raw_body=json.dumps(whole)), reply(raw_body=stream))
    config = RoleConfig(
        name="thinker", model="m", base_url=llm.base_url, api_key="k", prompt="thinker.md"
    )
    model = await asyncio.to_thread(make_chat_model, config)

    answer = await model.ainvoke("hi")
    # `timings` is the whole prompt: what the cache missed and what it held.
    assert prompt_seen(answer) == PromptRead(4000, "timings", truncated=True)
    streamed = [chunk async for chunk in model.astream("hi", stream_usage=True)]
    said = prompt_report(streamed)
    assert said is not None
    assert prompt_seen(said) == PromptRead(4000, "usage", truncated=True)


JSON_ACTION = """
defaults: {{base_url: {url}, model: scripted, api_key: test}}
roles:
  action: {{tool_mode: json, structured_output: json_schema}}
"""


def directive_requests(llm: ScriptedLLM) -> list[dict[str, Any]]:
    """The action role's directive requests in json mode."""
    return [
        body
        for body in llm.requests
        if (body.get("response_format") or {}).get("json_schema", {}).get("name")
        == "action_directive"
    ]


async def test_a_cut_directive_is_said_and_asked_again_smaller(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    """JSON tool mode: the first directive request is read as 3,000 tokens of about 9,000,
    and the server says it cut it."""

    def count_prompt(body: dict[str, Any]) -> int:
        return 3000 if len(directive_requests(llm)) == 1 else cost(body)

    llm.count_prompt = count_prompt
    models = tmp_path / "models.yaml"
    await asyncio.to_thread(models.write_text, JSON_ACTION.format(url=llm.base_url))
    answer = json.dumps({"tool": "answer"})
    llm.script(reply(answer, truncated=True), reply(answer), reply("Nothing here."))
    roomy = settings.model_copy(
        update={
            "ctx_size": 16_384,
            "max_input_tokens": 12_000,
            "models_config": models,
            "tool_selector": False,  # the model writes the whole directive
        }
    )
    async with DuckLM.open(roomy) as duck:
        result = await duck.run(HUGE_REQUEST, critic=False, memory=False)

    assert result.status == "completed"
    assert result.answer == "Nothing here."
    [cut] = [e for e in result.events if e["type"] == "context_cut"]
    assert cut["role"] == "action" and cut["action"] == "retried_smaller"
    assert cut["seen"] == 3000 and cut["sent"] > 8000
    first, retry = directive_requests(llm)
    assert cost(retry) < cost(first) / 2
    system = retry["messages"][0]["content"]
    assert "file_read" in system and "list_dir" in system, "DuckLM's own tools are still offered"
