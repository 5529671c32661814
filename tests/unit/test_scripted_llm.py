"""Tests for the scripted OpenAI-compatible server, driven through real ChatOpenAI."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from functools import partial
from typing import Any

import openai
import pytest
from blockbuster import blockbuster_ctx
from langchain_core.messages import AIMessageChunk, BaseMessageChunk
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from tests.support.scripted_llm import (
    EMBEDDING_DIMS,
    Reply,
    ScriptedLLM,
    ToolCallSpec,
    call,
    reply,
)


@tool
def search(query: str, limit: int) -> str:
    """Search the pond for things."""
    return f"{query}:{limit}"


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


async def chat(server: ScriptedLLM, **kwargs: Any) -> ChatOpenAI:
    # Building a client reads files (SSL context, package metadata): keep it off the loop.
    return await asyncio.to_thread(
        partial(
            ChatOpenAI,
            base_url=server.base_url,
            api_key=SecretStr("test"),
            model="scripted",
            max_retries=0,
            **kwargs,
        )
    )


def get_json(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        with err:
            return err.code, json.loads(err.read())


def post_json(url: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.headers["Content-Type"], err.read()


async def collect(model: Any, prompt: str) -> list[BaseMessageChunk]:
    return [chunk async for chunk in model.astream(prompt)]


@pytest.mark.asyncio
async def test_ainvoke_returns_scripted_content_and_records_request(llm: ScriptedLLM) -> None:
    llm.script(reply("Quack, hello."))

    msg = await (await chat(llm)).ainvoke("hi there")

    assert msg.content == "Quack, hello."
    assert llm.requests[-1]["messages"] == [{"role": "user", "content": "hi there"}]
    assert llm.requests[-1]["model"] == "scripted"
    assert msg.response_metadata["model_name"] == "scripted"
    assert llm.pending == 0


@pytest.mark.asyncio
async def test_replies_are_consumed_in_order(llm: ScriptedLLM) -> None:
    llm.script(reply("one"), reply("two"))
    model = await chat(llm)

    assert (await model.ainvoke("a")).content == "one"
    assert llm.pending == 1
    assert (await model.ainvoke("b")).content == "two"
    assert [r["messages"][-1]["content"] for r in llm.requests] == ["a", "b"]


@pytest.mark.asyncio
async def test_astream_yields_several_chunks_joining_to_content(llm: ScriptedLLM) -> None:
    text = "The quick  brown duck\njumps over the pond."
    llm.script(reply(text))

    chunks = await collect((await chat(llm)), "go")

    texts = [c.content for c in chunks if c.content]
    assert len(texts) > 1
    assert "".join(str(t) for t in texts) == text
    assert llm.requests[-1]["stream"] is True


@pytest.mark.asyncio
async def test_stream_arrives_incrementally(llm: ScriptedLLM) -> None:
    llm.script(reply("one two three four five", chunk_delay_s=0.08))
    started = time.monotonic()
    arrivals: list[float] = []

    async for chunk in (await chat(llm)).astream("go"):
        if chunk.content:
            arrivals.append(time.monotonic() - started)

    assert len(arrivals) == 5
    # Had the client buffered the body, every token would arrive at the end.
    assert arrivals[-1] - arrivals[0] > 0.2


@pytest.mark.asyncio
async def test_tool_call_via_ainvoke(llm: ScriptedLLM) -> None:
    llm.script(reply(tool_calls=[call("search", query="ducks", limit=3)]))

    msg = await (await chat(llm)).bind_tools([search]).ainvoke("find ducks")

    assert msg.tool_calls == [
        {
            "name": "search",
            "args": {"query": "ducks", "limit": 3},
            "id": "call_1",
            "type": "tool_call",
        }
    ]
    assert llm.requests[-1]["tools"][0]["function"]["name"] == "search"


@pytest.mark.asyncio
async def test_tool_calls_via_astream(llm: ScriptedLLM) -> None:
    long_query = "mallard teal wigeon pintail shoveler " * 3
    llm.script(
        reply(
            "Let me look.",
            tool_calls=[
                call("search", query=long_query, limit=7),
                ToolCallSpec(name="search", args={"query": "geese", "limit": 1}, id="fixed"),
            ],
        )
    )

    chunks = await collect((await chat(llm)).bind_tools([search]), "find birds")

    assert len(chunks) > 3
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert isinstance(total, AIMessageChunk)
    assert total.content == "Let me look."
    assert [(tc["name"], tc["args"], tc["id"]) for tc in total.tool_calls] == [
        ("search", {"query": long_query, "limit": 7}, "call_1"),
        ("search", {"query": "geese", "limit": 1}, "fixed"),
    ]
    assert total.response_metadata["finish_reason"] == "tool_calls"


@pytest.mark.asyncio
async def test_stream_usage_chunk_when_requested(llm: ScriptedLLM) -> None:
    llm.script(reply("two words"))

    chunks = await collect((await chat(llm, stream_usage=True)), "count these three")

    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert isinstance(total, AIMessageChunk)
    assert total.usage_metadata is not None
    assert total.usage_metadata["input_tokens"] == 6  # coun-t thes-e thre-e
    assert total.usage_metadata["output_tokens"] == 2
    assert llm.requests[-1]["stream_options"] == {"include_usage": True}


@pytest.mark.asyncio
async def test_status_500_reply_raises_internal_server_error(llm: ScriptedLLM) -> None:
    llm.script(reply("model exploded", status=500))

    with pytest.raises(openai.InternalServerError, match="model exploded"):
        await (await chat(llm)).ainvoke("hi")


@pytest.mark.asyncio
async def test_empty_queue_without_default_is_a_clear_500(llm: ScriptedLLM) -> None:
    with pytest.raises(openai.InternalServerError, match="no reply scripted for request #1"):
        await (await chat(llm)).ainvoke("hi")


@pytest.mark.asyncio
async def test_error_status_while_streaming(llm: ScriptedLLM) -> None:
    llm.script(reply("slow down", status=429))

    with pytest.raises(openai.RateLimitError, match="slow down"):
        await collect((await chat(llm)), "hi")


@pytest.mark.asyncio
async def test_default_and_responder(llm: ScriptedLLM) -> None:
    model = await chat(llm)
    llm.set_default(reply("fallback"))
    assert (await model.ainvoke("a")).content == "fallback"
    assert (await model.ainvoke("b")).content == "fallback"

    llm.set_responder(lambda body: reply(f"echo: {body['messages'][-1]['content']}"))
    assert (await model.ainvoke("c")).content == "echo: c"

    llm.set_responder(None)
    llm.set_default(None)
    with pytest.raises(openai.InternalServerError, match="request #4"):
        await model.ainvoke("d")


@pytest.mark.asyncio
async def test_malformed_raw_body_reaches_the_client(llm: ScriptedLLM) -> None:
    llm.script(Reply(raw_body="{not json"))

    # ChatOpenAI parses the raw response itself, so this is not an openai error.
    with pytest.raises(json.JSONDecodeError):
        await (await chat(llm)).ainvoke("hi")


def test_reasoning_is_sent_as_reasoning_content(llm: ScriptedLLM) -> None:
    llm.script(reply("42", reasoning="Think about ducks."))

    status, ctype, raw = post_json(
        f"{llm.base_url}/chat/completions",
        {"model": "thinker", "messages": [{"role": "user", "content": "why?"}]},
    )

    assert (status, ctype) == (200, "application/json")
    body = json.loads(raw)
    assert body["model"] == "thinker"
    message = body["choices"][0]["message"]
    assert message["reasoning_content"] == "Think about ducks."
    assert message["content"] == "42"
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"]["total_tokens"] > 0


def test_streamed_reasoning_and_sse_framing(llm: ScriptedLLM) -> None:
    llm.script(reply("a b", reasoning="hmm ok"))

    status, ctype, raw = post_json(
        f"{llm.base_url}/chat/completions",
        {"model": "m", "messages": [], "stream": True, "stream_options": {"include_usage": True}},
    )

    assert (status, ctype) == (200, "text/event-stream")
    events = raw.decode().split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""]
    chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-2]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "hmm ok"
    assert "".join(d.get("content", "") for d in deltas) == "a b"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] == 4
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"


def test_models_health_and_unknown_path(llm: ScriptedLLM) -> None:
    root = llm.base_url.removesuffix("/v1")

    assert get_json(f"{llm.base_url}/models") == (
        200,
        {
            "object": "list",
            "data": [{"id": "scripted", "object": "model", "created": 0, "owned_by": "tests"}],
        },
    )
    assert get_json(f"{root}/health") == (200, {"status": "ok"})
    status, body = get_json(f"{root}/nope")
    assert status == 404
    assert "no route" in body["error"]["message"]
    assert llm.requests == []


def test_close_is_idempotent_and_stops_serving() -> None:
    server = ScriptedLLM()
    server.close()
    server.close()

    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{server.base_url}/models", timeout=2)


@pytest.mark.asyncio
async def test_no_blocking_calls_on_the_event_loop() -> None:
    # Server start, requests (stream and not, with a server-side delay) and
    # close all happen while blockbuster watches the loop thread.
    with blockbuster_ctx("tests.support.scripted_llm"), ScriptedLLM() as server:
        server.script(reply("a b c", delay_s=0.05), reply("d e f", delay_s=0.05))
        model = await chat(server)
        assert (await model.ainvoke("x")).content == "a b c"
        assert [c.content for c in await collect(model, "y") if c.content] == ["d ", "e ", "f"]
        assert server.pending == 0
        await asyncio.sleep(0)


async def test_embeddings_are_fixed_per_text(llm: ScriptedLLM) -> None:
    # Building a client reads the system's CA files: not on the event loop.
    client = await asyncio.to_thread(
        partial(openai.AsyncOpenAI, base_url=llm.base_url, api_key="test", max_retries=0)
    )
    async with client:
        first = await client.embeddings.create(model="scripted", input=["a duck", "a heron"])
        again = await client.embeddings.create(model="scripted", input="a duck")
    ducks, herons = (item.embedding for item in first.data)
    assert len(ducks) == EMBEDDING_DIMS
    assert again.data[0].embedding == ducks != herons
    assert llm.embedded == ["a duck", "a heron", "a duck"]
    assert llm.requests == []  # embeddings are not chat requests
