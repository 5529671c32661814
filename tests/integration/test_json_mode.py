"""The action role in json mode: valid, invalid and unknown-tool directives."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from ducklm.tools.coder_tools import CODER_TOOL_NAMES
from ducklm.tools.file_ops import FILE_OP_NAMES
from tests.support.scripted_llm import Reply, ScriptedLLM, reply

MODELS = """
defaults: {{base_url: {url}, model: scripted, api_key: test}}
roles:
  action: {{tool_mode: json, structured_output: {mode}}}
"""


def _directive(*actions: tuple[str, dict[str, object]], reasoning: str = "because") -> str:
    return json.dumps(
        {"reasoning": reasoning, "actions": [{"tool": t, "args": a} for t, a in actions]}
    )


def directive_mode(models: Path) -> dict[str, object]:
    """Settings for the model deciding by directive: the tool selector off.

    These tests are about the directive the model writes; choosing the tool by meaning
    (which leaves the model only the arguments) is tested in tests/unit/test_tool_choice.py
    and test_tool_choice_graph.py.
    """
    return {"models_config": models, "tool_selector": False}


@pytest.fixture(params=["json_schema", "json_object_schema"])
async def duck(
    request: pytest.FixtureRequest, settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> AsyncIterator[DuckLM]:
    models = tmp_path / "models.yaml"
    text = MODELS.format(url=llm.base_url, mode=request.param)
    await asyncio.to_thread(models.write_text, text)
    async with DuckLM.open(settings.model_copy(update=directive_mode(models))) as runtime:
        yield runtime


async def test_valid_directive_runs_the_tool(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "todo.md").write_text, "feed ducks")
    llm.script(
        reply(_directive(("file_read", {"path": "todo.md"}), reasoning="read the list")),
        reply(_directive()),
        reply("Your list says: feed ducks."),
    )
    result = await duck.run("what is on my list?", critic=False, memory=False)

    assert result.status == "completed"
    assert result.answer == "Your list says: feed ducks."
    reasoning = [e["text"] for e in result.events if e["type"] == "reasoning"]
    assert reasoning == ["read the list", "because"]
    finished = next(e for e in result.events if e["type"] == "tool_call_finished")
    assert finished["output"] == "feed ducks"
    first = llm.requests[0]
    assert "tools" not in first, "json mode must not send native tools"
    fmt = first["response_format"]
    schema = fmt["json_schema"]["schema"] if fmt["type"] == "json_schema" else fmt["schema"]
    assert fmt["type"] in ("json_schema", "json_object")
    # One branch per offered tool, its name a constant, after the explicit answer; the
    # file operations only for a request that names one (this one reads).
    names = [branch["properties"]["tool"]["const"] for branch in schema["anyOf"]]
    offered = duck.context.tools.without(CODER_TOOL_NAMES | FILE_OP_NAMES).names
    assert names == ["answer", *offered]
    read = schema["anyOf"][names.index("file_read")]["properties"]["args"]
    assert read["required"] == ["path"] and read["properties"]["path"]["type"] == "string"
    # The few-shot examples come as chat turns between the system prompt and the request.
    examples = first["messages"][1:-1]
    assert [m["role"] for m in examples[:2]] == ["user", "assistant"]
    assert all(json.loads(m["content"])["tool"] for m in examples[1::2])
    # The tool result reached the model as plain text, not as a `tool` message.
    second = llm.requests[1]["messages"]
    assert all(m["role"] != "tool" for m in second)
    assert "feed ducks" in second[-1]["content"]


async def test_invalid_json_gets_one_repair(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.script(
        reply("sure! I will list the folder"),
        reply(_directive(("list_dir", {"path": "."}))),
        reply(_directive()),
        reply("The folder is empty."),
    )
    result = await duck.run("what is here?", critic=False, memory=False)
    assert result.status == "completed"
    assert result.answer == "The folder is empty."
    repair = llm.requests[1]["messages"][-1]["content"]
    assert "not valid JSON" in repair
    assert llm.pending == 0


async def test_unknown_tool_twice_goes_on_to_the_thinker_with_a_note(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    llm.script(
        reply(_directive(("rm_rf", {}))),
        reply(_directive(("delete_everything", {}))),
        reply("I could not use a tool for this."),
    )
    result = await duck.run("clean up", critic=False, memory=False)
    assert result.status == "completed"
    assert result.answer == "I could not use a tool for this."
    assert "unknown tool 'rm_rf'" in llm.requests[1]["messages"][-1]["content"]
    thinker_system = llm.requests[2]["messages"][0]["content"]
    assert "no usable directive" in thinker_system
    assert "unknown tool 'delete_everything'" in thinker_system
    assert not [e for e in result.events if e["type"].startswith("tool_call")]


async def test_bad_arguments_are_repaired(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.script(
        reply(_directive(("file_read", {"file": "x"}))),
        reply(_directive()),
        reply("Nothing to read."),
    )
    result = await duck.run("read it", critic=False, memory=False)
    assert result.status == "completed"
    assert "bad arguments for file_read" in llm.requests[1]["messages"][-1]["content"]


LIMITS = """
defaults: {{base_url: {url}, model: scripted, api_key: test, max_output_tokens: 111,
            structured_output: json_object_schema}}
roles:
  action: {{tool_mode: json, max_output_tokens: 222}}
  thinker: {{max_output_tokens: 333}}
"""


async def test_every_role_limits_its_reply_with_max_tokens(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    # llama-cpp-python's server reads `max_tokens` and ignores `max_completion_tokens`:
    # a JSON role sent only the latter generated until the context was full.
    models = tmp_path / "models.yaml"
    await asyncio.to_thread(models.write_text, LIMITS.format(url=llm.base_url))

    def answer(body: dict[str, object]) -> Reply:
        fmt = body.get("response_format")
        schema = fmt.get("schema", {}) if isinstance(fmt, dict) else {}
        if "reasoning" in schema.get("properties", {}):
            return reply(_directive())
        if "score" in schema.get("properties", {}):
            return reply(json.dumps({"score": 0.9, "summary": "fine"}))
        if "should_store" in schema.get("properties", {}):
            return reply(json.dumps({"should_store": False}))
        return reply("Quack.")

    llm.set_responder(answer)
    async with DuckLM.open(settings.model_copy(update=directive_mode(models))) as duck:
        result = await duck.run("say quack to my ducks")
        await duck.reviewed(result.thread_id)  # the critic and memory policy, behind it
    assert result.status == "completed"
    sent = [(r["messages"][0]["content"].split(".")[0], r.get("max_tokens")) for r in llm.requests]
    limits = {limit for _, limit in sent}
    assert limits == {111, 222, 333}, sent  # critic and memory policy: 111
    assert not [r for r in llm.requests if "max_completion_tokens" in r]


async def test_a_directive_cut_at_the_output_limit_goes_on_to_the_thinker(
    duck: DuckLM, llm: ScriptedLLM
) -> None:
    # With a limit the server honours, a small model's rambling directive is cut off:
    # json_schema replies make the openai library raise, the others say finish_reason.
    cut = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": '{"reasoning": "a long sto'},
                "finish_reason": "length",
            }
        ],
    }
    llm.script(reply(raw_body=json.dumps(cut)), reply("Once upon a time, a duck swam."))
    result = await duck.run("tell me a story about this pond", critic=False, memory=False)
    assert result.status == "completed", result.events
    assert result.answer == "Once upon a time, a duck swam."
    assert len(llm.requests) == 2, "a cut reply is not asked for again"
    assert "reached the output limit" in llm.requests[1]["messages"][0]["content"]
