"""A conversation on servers that speak different dialects of the wire, through real turns.

The scripted server plays each dialect (`Wire`): reasoning in `reasoning_content`, in
`reasoning` or inline in `<think>` tags; usage whole, counting only the cache misses,
counting the messages' text only, 0 or absent. Each conversation has two turns in one
thread, the first with a tool call: the answers are clean, the reasoning is shown as
`reasoning` events and never sent back, and no count fails a turn.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.schema import StreamPart

from ducklm.config.settings import Settings
from ducklm.kit.events import Event
from ducklm.models.errors import INTERNAL_ERROR
from ducklm.models.wire import REASONING_KEY
from ducklm.runtime.facade import DuckLM
from tests.support.scripted_llm import ScriptedLLM, Wire, call, reply
from tests.support.server import Served, stream

QUIET = {"critic": False, "memory": False}
THOUGHT = "The person wants the folder listed first."
LATER = "Now I can say what is there."


def of_type(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e["type"] == kind]


async def two_turns(duck: DuckLM, llm: ScriptedLLM) -> tuple[Any, Any]:
    """A turn with a tool call, then a second turn in the same thread."""
    llm.script(
        reply(tool_calls=[call("list_dir", path=".")], reasoning=THOUGHT),
        reply("Nothing here.", reasoning=LATER),
        reply("Still nothing.", reasoning="Same folder."),
    )
    first = await duck.run("what is here?", thread_id="w1", **QUIET)
    second = await duck.run("and now?", thread_id="w1", **QUIET)
    return first, second


def sent_texts(llm: ScriptedLLM) -> list[str]:
    """Every message text sent to the server, in every request."""
    return [
        str(message.get("content") or "") + str(message.get(REASONING_KEY) or "")
        for body in llm.requests
        for message in body["messages"]
    ]


@pytest.mark.parametrize(
    "style", ["reasoning_content", "reasoning", "think_tags", "think_opened_unrendered"]
)
async def test_reasoning_is_shown_and_never_sent_back(
    duck: DuckLM, llm: ScriptedLLM, style: Any
) -> None:
    """`think_opened_unrendered`: a template that opens `<think>` on a server that cannot
    render it (llama-cpp-python): the first reply is held back until its `</think>`."""
    if style == "think_opened_unrendered":
        style, llm.renders_template = "think_opened", False
    llm.wire = Wire(reasoning=style)
    first, second = await two_turns(duck, llm)

    assert (first.status, first.answer) == ("completed", "Nothing here."), first.events
    assert (second.status, second.answer) == ("completed", "Still nothing."), second.events
    shown = "".join(e["text"] for e in of_type(first.events, "reasoning"))
    assert THOUGHT in shown and LATER in shown
    assert {e["source"] for e in of_type(first.events, "reasoning")} == {"action"}
    assert "".join(e["text"] for e in of_type(first.events, "token")) == "Nothing here."
    texts = sent_texts(llm)
    assert not any(THOUGHT in t or LATER in t or "<think>" in t for t in texts), texts
    # The stored answer is the answer: the second turn's history carries it as it was said.
    history = [m for m in llm.requests[-1]["messages"] if m["role"] == "assistant"]
    assert "Nothing here." in [m.get("content") for m in history]
    # Kept apart, where LangChain keeps reasoning (Agent Protocol clients show it).
    stored = (await duck.states.snapshot("w1")).values["messages"]
    answers = [m for m in stored if m.type == "ai" and m.text == "Nothing here."]
    assert [m.additional_kwargs.get(REASONING_KEY) for m in answers] == [LATER]


@pytest.mark.parametrize(
    "wire",
    [
        Wire(usage="cache_misses"),  # Ollama before its mid-2026 fix
        Wire(usage="cache_misses", cached_tokens=True),
        Wire(usage="content_only"),
        Wire(timings=True, cached_tokens=True),  # llama-server
        # 0, no usage and usage in every chunk: tests/unit/test_wire.py
    ],
    ids=lambda wire: f"{wire.usage}-{wire.cached_tokens}-{wire.timings}",
)
async def test_a_count_that_is_not_of_the_whole_prompt_fails_no_turn(
    settings: Settings, llm: ScriptedLLM, wire: Wire
) -> None:
    llm.wire = wire
    # The rules leave a long request's route to sys_util: one step, no code.
    route = json.dumps({"multi_step": False, "code": False, "reason": "one step"})
    llm.set_schema_replies({"RouteAnswer": reply(route)})
    # A long request, so that a count of the cache misses alone is well under it.
    long = "Please look at what is here. " + " ".join(f"item{n} ok" for n in range(300))
    llm.script(
        reply(tool_calls=[call("list_dir", path=".")]),
        reply("Nothing here."),
        reply("Still nothing."),
    )
    async with DuckLM.open(settings) as duck:
        first = await duck.run(long, thread_id="w2", **QUIET)
        second = await duck.run("and now? " + long, thread_id="w2", **QUIET)

    for result, answer in ((first, "Nothing here."), (second, "Still nothing.")):
        assert (result.status, result.answer) == ("completed", answer), result.events
        assert not of_type(result.events, "context_cut"), "a count is not a cut"
        assert not of_type(result.events, "error")


async def test_a_prompt_the_server_says_it_cut_is_still_retried_smaller(
    settings: Settings, llm: ScriptedLLM
) -> None:
    """llama-server's `truncated` flag, with its `timings`: the server's own word."""
    llm.wire = Wire(timings=True)
    route = json.dumps({"multi_step": False, "code": False, "reason": "one step"})
    llm.set_schema_replies({"RouteAnswer": reply(route)})
    llm.count_prompt = lambda body: 3000 if "tools" in body else 400
    huge = "Please read this carefully. " + " ".join(f"ledger{n} ok" for n in range(1300))
    llm.script(reply(tool_calls=[call("list_dir")], truncated=True), reply("Nothing here."))
    roomy = settings.model_copy(update={"ctx_size": 16_384, "max_input_tokens": 12_000})
    async with DuckLM.open(roomy) as duck:
        result = await duck.run(huge, **QUIET)

    assert (result.status, result.answer) == ("completed", "Nothing here."), result.events
    [cut] = of_type(result.events, "context_cut")
    assert cut["evidence"] == "truncated" and cut["action"] == "retried_smaller"


async def test_a_window_too_small_for_the_request_is_said_plainly(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    llm.props = {"default_generation_settings": {"n_ctx": 700}}
    llm.set_default(reply("unused"))
    result = await duck.run("what is here? " * 40, **QUIET)

    assert result.status == "failed"
    [error] = of_type(result.events, "error")
    assert error["message"] != INTERNAL_ERROR
    assert "700 tokens, as its /props says" in error["message"]
    assert "--ctx-size" in error["message"]
    assert of_type(result.events, "context_shrunk"), "packed smaller first, and said so"


@pytest.mark.parametrize(
    ("said", "too_long"),
    [
        # vLLM started without `--enable-auto-tool-choice`, to any request with tools
        ('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser '
         "to be set", False),
        # llama-server, to a prompt over its window
        ("the request exceeds the available context size, try increasing it", True),
    ],
)  # fmt: skip
async def test_a_refusal_is_named_with_the_servers_own_words(
    duck: DuckLM, llm: ScriptedLLM, said: str, too_long: bool
) -> None:
    llm.set_responder(lambda body: reply(said, status=400))
    result = await duck.run("what is here?", **QUIET)

    assert result.status == "failed"
    [error] = [e for e in of_type(result.events, "error") if e.get("fatal") is not False]
    assert f'The server said: "{said}"' in error["message"]
    assert ("context window" in error["message"]) is too_long


async def test_agent_protocol_messages_carry_the_reasoning_apart(
    client: LangGraphClient, llm: ScriptedLLM
) -> None:
    """As LangGraph's server passes it: in `additional_kwargs`, which clients that show
    reasoning read (LangChain's `reasoning` content block)."""
    llm.wire = Wire(reasoning="think_tags")
    llm.script(reply("Hello there.", reasoning=THOUGHT))
    thread = await client.threads.create()
    stream = client.runs.stream(
        thread["thread_id"],
        "ducklm",
        input={"messages": [{"role": "user", "content": "hi"}]},
        stream_mode="messages",
        context=QUIET,
    )
    async with asyncio.timeout(30):
        parts = [part async for part in stream if isinstance(part, StreamPart)]

    [*_, [last]] = [part.data for part in parts if part.event == "messages/partial"]
    assert last["content"] == "Hello there."
    assert last["additional_kwargs"][REASONING_KEY] == THOUGHT
    # Reloaded: the thread's state keeps it apart, as it streamed.
    state = await client.threads.get_state(thread["thread_id"])
    (answer,) = [m for m in state["values"]["messages"] if m["type"] == "ai"]
    assert answer["content"] == "Hello there."
    assert answer["additional_kwargs"][REASONING_KEY] == THOUGHT


async def test_a_reopened_conversation_shows_its_reasoning_apart(
    served: Served, llm: ScriptedLLM
) -> None:
    """The transcript and the conversation carry each message's reasoning as the live
    `reasoning` events showed it; the answer stays the answer."""
    llm.wire = Wire(reasoning="reasoning_content")
    llm.script(
        reply(tool_calls=[call("list_dir", path=".")], reasoning=THOUGHT),
        reply("Nothing here.", reasoning=LATER),
    )
    conversation = (await served.client.post("/v1/conversations", json={})).json()["id"]
    body = {"message": "what is here?", "conversation_id": conversation, **QUIET}
    events = await stream(served, "/v1/chat/stream", body)
    assert events[-1]["status"] == "completed", events[-1]
    live = "".join(e["text"] for e in events if e["type"] == "reasoning")

    transcript = await served.client.get(f"/v1/conversations/{conversation}/transcript")
    (exchange,) = transcript.json()["exchanges"]
    said = [m for m in exchange["messages"] if m["role"] == "assistant"]
    shown = [(m["content"], m["reasoning"]) for m in said]
    assert shown == [("", THOUGHT), ("Nothing here.", LATER)]
    assert "".join(m["reasoning"] for m in said) == live
    detail = (await served.client.get(f"/v1/conversations/{conversation}")).json()
    assert [m["reasoning"] for m in detail["messages"] if m["role"] == "assistant"] == [
        THOUGHT, LATER
    ]  # fmt: skip


JSON_ACTION = """
defaults: {{base_url: {url}, model: scripted, api_key: test}}
roles:
  action: {{tool_mode: json, structured_output: json_schema}}
"""


async def test_a_json_reply_after_inline_reasoning_is_read(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    """The JSON roles read whole replies through the same reader: `<think>` first is fine."""
    llm.wire = Wire(reasoning="think_tags")
    models = tmp_path / "models.yaml"
    await asyncio.to_thread(models.write_text, JSON_ACTION.format(url=llm.base_url))
    directive = json.dumps({"tool": "list_dir", "args": {"path": "."}})
    llm.script(
        reply(directive, reasoning="A directive, then."),
        reply(json.dumps({"tool": "answer"}), reasoning="Seen it."),
        reply("Nothing here.", reasoning=LATER),
    )
    update = {"models_config": models, "tool_selector": False}
    async with DuckLM.open(settings.model_copy(update=update)) as duck:
        result = await duck.run("what is here?", **QUIET)

    assert (result.status, result.answer) == ("completed", "Nothing here."), result.events
    [first, *_] = of_type(result.events, "action_decided")
    assert first["calls"][0]["tool"] == "list_dir" and not first["repaired"]
    assert not any("<think>" in t for t in sent_texts(llm))
