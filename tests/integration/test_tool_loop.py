"""The tool loop through the whole graph, over real HTTP to the scripted model server."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from tests.support.scripted_llm import ScriptedLLM, call, reply


async def test_one_tool_call_then_answer(duck: DuckLM, llm: ScriptedLLM, workspace: Path) -> None:
    await asyncio.to_thread((workspace / "notes.md").write_text, "buy duck food\n")
    llm.script(
        reply(tool_calls=[call("file_read", path="notes.md")]),
        reply("The note says: buy duck food."),
    )
    result = await duck.run("What is in notes.md?", critic=False, memory=False)

    assert result.status == "completed"
    assert result.answer == "The note says: buy duck food."
    types = [e["type"] for e in result.events]
    assert types[0] == "run_started" and types[-1] == "done"
    finished = next(e for e in result.events if e["type"] == "tool_call_finished")
    assert finished["tool"] == "file_read"
    assert finished["status"] == "success"
    assert finished["output"] == "buy duck food\n"
    tokens = "".join(e["text"] for e in result.events if e["type"] == "token")
    assert tokens == "The note says: buy duck food."
    # The second request carried the tool result back to the model.
    second = llm.requests[1]["messages"]
    assert second[-1]["role"] == "tool"
    assert second[-1]["content"] == "buy duck food\n"
    assert llm.pending == 0


async def test_two_model_calls_per_one_tool_turn(duck: DuckLM, llm: ScriptedLLM) -> None:
    """The action role's own answer stands: the thinker is not asked to repeat it."""
    llm.script(reply(tool_calls=[call("list_dir")]), reply("Nothing here."))
    result = await duck.run("what is here?", critic=False, memory=False)
    assert result.answer == "Nothing here."
    assert len(llm.requests) == 2
    assert all("tools" in r for r in llm.requests)


async def test_a_separate_thinker_model_writes_the_answer(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    models = tmp_path / "models.yaml"
    text = (
        f"defaults: {{base_url: {llm.base_url}, model: small}}\nroles: {{thinker: {{model: big}}}}"
    )
    await asyncio.to_thread(models.write_text, text)
    async with DuckLM.open(settings.model_copy(update={"models_config": models})) as duck:
        llm.script(reply("draft from the small model"), reply("The big model's answer."))
        result = await duck.run("hi", critic=False, memory=False)
    assert result.answer == "The big model's answer."
    tokens = "".join(e["text"] for e in result.events if e["type"] == "token")
    assert tokens == "The big model's answer.", "the action's draft is not streamed"
    assert [r["model"] for r in llm.requests] == ["small", "big"]
