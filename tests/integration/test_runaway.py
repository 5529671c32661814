"""No runaway answers: a repeating stream is ended and marked, a cut one is marked, the
role's sampling fields reach the server; over real HTTP to the scripted server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from ducklm.config.settings import Settings
from ducklm.models.local.autostart import local_models_path
from ducklm.models.roles import load_roles
from ducklm.runtime.facade import DuckLM
from ducklm.server.routes.views import message_view
from tests.support.scripted_llm import Reply, ScriptedLLM, reply

PARAGRAPH = (
    "Projects are amazing! They help you learn new skills, meet new people and build "
    "things that matter to you and to the others around you every single day. "
)
OPENING = "notes.md is about projects.\n\n"
LOOP = OPENING + PARAGRAPH * 20
LIST = "".join(
    f"- `{name}.md`: the notes on {name}, kept in the workspace and read by the tool.\n"
    for name in (
        f"{bird}-{year}"
        for bird in ("ducks", "geese", "swans", "herons")
        for year in range(2019, 2025)
    )
)
CODE = (
    "```python\n"
    + "".join(f"    assert duck.{f}{n} == expected.{f}{n}\n" for f in "abcdef" for n in range(4))
    + "```"
)
QUIET = {"critic": False, "memory": False}


async def _last_answer(duck: DuckLM, thread_id: str) -> AIMessage:
    messages = await duck.messages(thread_id)
    answer = messages[-1]
    assert isinstance(answer, AIMessage)
    return answer


async def test_a_repeating_answer_is_ended_and_marked(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.script(reply(LOOP))
    result = await duck.run("What is in notes.md?", **QUIET)

    assert result.status == "completed"
    assert result.answer == (OPENING + PARAGRAPH).strip(), "the text before the repeat is kept"
    cut = [e for e in result.events if e["type"] == "answer_cut"]
    assert [(e["reason"], e["note"]) for e in cut] == [("repeating", "stopped: repeating")]
    streamed = "".join(e["text"] for e in result.events if e["type"] == "token")
    assert len(streamed) < len(LOOP) / 4, "the stream was closed, not read to its end"
    assert streamed[: len(streamed) - cut[0]["dropped"]].strip() == result.answer
    # Reopened, the conversation says so too.
    view = message_view(await _last_answer(duck, result.thread_id))
    assert view is not None and (view.content, view.cut) == (result.answer, "repeating")


@pytest.mark.parametrize("text", [LIST, CODE], ids=["list", "code"])
async def test_similar_lines_are_not_cut(duck: DuckLM, llm: ScriptedLLM, text: str) -> None:
    llm.script(reply(text))
    result = await duck.run("list them", **QUIET)
    assert result.answer.strip() == text.strip()
    assert not [e for e in result.events if e["type"] == "answer_cut"]
    view = message_view(await _last_answer(duck, result.thread_id))
    assert view is not None and view.cut is None


@pytest.fixture
async def json_duck(settings: Settings, llm: ScriptedLLM, tmp_path: Path) -> AsyncIterator[DuckLM]:
    """DuckLM as on the bundled model: JSON directives, the thinker writes the answer, and
    the packaged llama-cpp-python roles file (its sampling fields) on the scripted server."""
    text = (await asyncio.to_thread(local_models_path().read_text)).replace(
        "http://127.0.0.1:8081/v1", llm.base_url
    )
    models = tmp_path / "models.yaml"
    await asyncio.to_thread(models.write_text, text)
    async with DuckLM.open(settings.model_copy(update={"models_config": models})) as runtime:
        yield runtime


NO_TOOL = json.dumps({"reasoning": "no tool needed", "actions": []})


def answer_with(text: str, **fields: str) -> Callable[[dict[str, Any]], Reply]:
    """Every JSON request (the directive) says "no tool"; the streamed one is `text`."""
    return lambda body: reply(text, **fields) if body.get("stream") else reply(NO_TOOL)  # type: ignore[arg-type]


async def test_an_answer_at_the_length_limit_is_marked(json_duck: DuckLM, llm: ScriptedLLM) -> None:
    text = "A long story about the pond, the ducks and the heron that"
    llm.set_responder(answer_with(text, finish_reason="length"))
    result = await json_duck.run("tell me a long story about the pond", **QUIET)

    assert result.status == "completed"
    assert result.answer == text, "a cut answer keeps all it has"
    cut = [e for e in result.events if e["type"] == "answer_cut"]
    assert [(e["reason"], e["note"], e["role"], e["dropped"]) for e in cut] == [
        ("length", "stopped at the length limit", "thinker", 0)
    ]
    view = message_view(await _last_answer(json_duck, result.thread_id))
    assert view is not None and view.cut == "length"


async def test_the_thinker_ends_a_repeating_answer(json_duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.set_responder(answer_with(LOOP))
    result = await json_duck.run("What is in notes.md?", **QUIET)
    assert result.answer == (OPENING + PARAGRAPH).strip()
    assert [e["role"] for e in result.events if e["type"] == "answer_cut"] == ["thinker"]


async def test_each_roles_sampling_reaches_the_request(json_duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.set_responder(answer_with("Your list is empty."))
    await json_duck.run("what is on my list?", **QUIET)

    roles = await asyncio.to_thread(load_roles, local_models_path())
    answer = next(r for r in llm.requests if r.get("stream"))
    assert answer["max_tokens"] == roles["thinker"].max_output_tokens == 512
    assert (answer["repeat_penalty"], answer["frequency_penalty"]) == (1.1, 0.2)
    directive = next(
        r for r in llm.requests if "ActionDirective" in json.dumps(r.get("response_format"))
    )
    assert directive["max_tokens"] == roles["action"].max_output_tokens == 256
    assert not {"repeat_penalty", "frequency_penalty"} & set(directive), "no penalties on JSON"


async def test_sampling_is_set_per_role_over_the_defaults(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    models = tmp_path / "models.yaml"
    await asyncio.to_thread(
        models.write_text,
        f"defaults: {{base_url: {llm.base_url}, model: scripted, api_key: test,"
        " sampling: {repeat_penalty: 1.2, dry_multiplier: 0.8}}\n"
        "roles:\n  action: {max_output_tokens: 300,"
        " sampling: {dry_multiplier: 0.0, dry_allowed_length: 4}}\n",
    )
    llm.script(reply("Hello."))
    async with DuckLM.open(settings.model_copy(update={"models_config": models})) as duck:
        await duck.run("say hello", **QUIET)
    sent = llm.requests[-1]
    assert sent["max_tokens"] == 300
    fields = {k: sent[k] for k in ("repeat_penalty", "dry_multiplier", "dry_allowed_length")}
    assert fields == {"repeat_penalty": 1.2, "dry_multiplier": 0.0, "dry_allowed_length": 4}
