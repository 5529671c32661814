"""The coder core against the scripted model server: proposals, retries, path rules."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ducklm.config.settings import Settings
from ducklm.graph.context import DuckContext
from ducklm.graph.dependencies import open_dependencies
from ducklm.tools.errors import ToolError
from ducklm.turn.coding.coder import CodeProposal, CoderError, propose_change, python_syntax_error
from tests.support.scripted_llm import ScriptedLLM, reply

MODELS = """
defaults: {{base_url: {url}, model: scripted, api_key: test}}
roles:
  coder: {{structured_output: {mode}, max_output_tokens: 64}}
"""
BUGGY = "def ratio(a, b):\n    return a / b\n"
FIXED = "def ratio(a, b):\n    return a / b if b else 0.0\n"
BROKEN = "def ratio(a, b)\n    return a / b\n"


@pytest.fixture
async def ctx(settings: Settings) -> AsyncIterator[DuckContext]:
    """The run context DuckLM opens, without the graph: the coder core needs no graph."""
    async with open_dependencies(settings) as deps:
        yield deps.context


def _change(content: str, explanation: str = "done") -> str:
    return json.dumps({"content": content, "explanation": explanation})


def _user_text(request: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "user")


async def test_generate_a_new_file(ctx: DuckContext, llm: ScriptedLLM, workspace: Path) -> None:
    llm.script(reply(_change("def quack():\n    return 'quack'\n", "a quacking function")))
    proposal = await propose_change(
        ctx, "generate", "./pkg/ducks.py", "a quack() function", workspace=workspace
    )

    assert (proposal.path, proposal.existed, proposal.old_content) == ("pkg/ducks.py", False, "")
    assert proposal.diff.startswith("--- /dev/null\n+++ b/pkg/ducks.py\n@@ -0,0 +1,2 @@\n")
    assert "+def quack():\n" in proposal.diff
    assert (proposal.syntax_ok, proposal.syntax_error, proposal.attempts) == (True, None, 1)
    assert proposal.explanation == "a quacking function"
    assert not await asyncio.to_thread((workspace / "pkg").exists), "a proposal writes nothing"
    [request] = llm.requests
    assert "a quack() function" in _user_text(request)
    assert "does not exist yet" in _user_text(request)
    assert "whole new file" in request["messages"][0]["content"]
    schema = request["response_format"]["json_schema"]["schema"]
    assert set(schema["required"]) == {"content", "explanation"}


async def test_fix_an_existing_file(ctx: DuckContext, llm: ScriptedLLM, workspace: Path) -> None:
    await asyncio.to_thread((workspace / "calc.py").write_text, BUGGY)
    llm.script(reply(_change(FIXED, "guard against b == 0")))
    error = "ZeroDivisionError: division by zero"
    proposal = await propose_change(ctx, "fix", "calc.py", error, workspace=workspace)

    assert (proposal.existed, proposal.old_content, proposal.new_content) == (True, BUGGY, FIXED)
    assert proposal.diff.startswith("--- a/calc.py\n+++ b/calc.py\n")
    assert "-    return a / b\n+    return a / b if b else 0.0\n" in proposal.diff
    assert proposal.changed
    sent = _user_text(llm.requests[0])
    assert error in sent
    assert BUGGY in sent
    assert await asyncio.to_thread((workspace / "calc.py").read_text) == BUGGY


async def test_a_crlf_file_keeps_its_line_endings(
    ctx: DuckContext, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread(
        (workspace / "calc.py").write_bytes, BUGGY.replace("\n", "\r\n").encode()
    )
    llm.script(reply(_change(FIXED)))
    proposal = await propose_change(ctx, "fix", "calc.py", "b may be 0", workspace=workspace)

    assert proposal.new_content == FIXED.replace("\n", "\r\n")
    assert proposal.diff.count("\n-") == 1, "only the changed line differs"


async def test_a_syntax_error_goes_back_once(
    ctx: DuckContext, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "calc.py").write_text, BUGGY)
    llm.script(reply(_change(BROKEN)), reply(_change(FIXED)))
    proposal = await propose_change(ctx, "fix", "calc.py", "b may be 0", workspace=workspace)

    assert (proposal.syntax_ok, proposal.new_content, proposal.attempts) == (True, FIXED, 2)
    assert len(llm.requests) == 2
    retry = _user_text(llm.requests[1])
    assert "not valid Python: line 1: expected ':'" in retry
    assert BROKEN in retry


async def test_a_syntax_error_twice_is_reported_not_hidden(
    ctx: DuckContext, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "calc.py").write_text, BUGGY)
    llm.script(reply(_change(BROKEN)), reply(_change("def ratio(:\n    pass\n")))
    proposal = await propose_change(ctx, "fix", "calc.py", "b may be 0", workspace=workspace)

    assert not proposal.syntax_ok
    assert proposal.syntax_error is not None
    assert proposal.syntax_error.startswith("line 1: ")
    assert (len(llm.requests), proposal.attempts, llm.pending) == (2, 2, 0)


async def test_junk_then_valid_json_is_repaired(
    ctx: DuckContext, llm: ScriptedLLM, workspace: Path
) -> None:
    llm.script(reply("Sure! Here is your file: print('hi')"), reply(_change("print('hi')\n")))
    proposal = await propose_change(ctx, "generate", "hi.py", "print hi", workspace=workspace)

    assert (proposal.new_content, proposal.attempts) == ("print('hi')\n", 2)
    repair = llm.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": "Sure! Here is your file: print('hi')"}
    assert "not valid JSON" in repair[-1]["content"]


async def test_junk_twice_is_a_coder_error(
    ctx: DuckContext, llm: ScriptedLLM, workspace: Path
) -> None:
    llm.script(reply("no"), reply(json.dumps({"code": "print(1)"})))
    with pytest.raises(CoderError) as caught:
        await propose_change(ctx, "generate", "x.py", "print 1", workspace=workspace)

    message = str(caught.value)
    assert "the coder gave no usable reply for 'x.py'" in message
    assert "content: Field required" in message
    assert len(llm.requests) == 2


@pytest.fixture(params=["json_schema", "json_object_schema"])
async def ctx_by_mode(
    request: pytest.FixtureRequest, settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> AsyncIterator[DuckContext]:
    """The context with the coder role asking for JSON each way a server takes it."""
    models = tmp_path / "models.yaml"
    text = MODELS.format(url=llm.base_url, mode=request.param)
    await asyncio.to_thread(models.write_text, text)
    async with open_dependencies(settings.model_copy(update={"models_config": models})) as deps:
        yield deps.context


async def test_a_reply_cut_at_the_output_limit_is_not_repaired(
    ctx_by_mode: DuckContext, llm: ScriptedLLM, workspace: Path
) -> None:
    # openai's parser raises on a cut json_schema reply; the others carry finish_reason.
    ctx = ctx_by_mode
    body = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": '{"content": "x = [1, 2,'},
                "finish_reason": "length",
            }
        ],
    }
    llm.script(reply(raw_body=json.dumps(body)))
    with pytest.raises(CoderError, match=r"cut off at its output limit \(64 tokens\)"):
        await propose_change(ctx, "generate", "x.py", "a long list", workspace=workspace)
    assert len(llm.requests) == 1


async def test_fenced_content_is_unwrapped(
    ctx: DuckContext, llm: ScriptedLLM, workspace: Path
) -> None:
    llm.script(reply(_change("```python\nprint('hi')\n```")))
    proposal = await propose_change(ctx, "generate", "hi.py", "print hi", workspace=workspace)
    assert proposal.new_content == "print('hi')\n"


@pytest.mark.parametrize("path", ["../outside.py", "/etc/passwd", "~/x.py", "link/x.py"])
async def test_paths_outside_the_workspace_never_reach_the_model(
    ctx: DuckContext, llm: ScriptedLLM, workspace: Path, tmp_path: Path, path: str
) -> None:
    await asyncio.to_thread((workspace / "link").symlink_to, tmp_path)
    with pytest.raises(ToolError, match=r"outside the workspace|not usable"):
        await propose_change(ctx, "fix", path, "boom", workspace=workspace)
    assert llm.requests == []


async def test_unreadable_and_missing_files_are_tool_errors(
    ctx: DuckContext, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "blob.py").write_bytes, b"\xff\xfe\x00junk")
    with pytest.raises(ToolError, match="not a UTF-8 text file"):
        await propose_change(ctx, "fix", "blob.py", "boom", workspace=workspace)
    with pytest.raises(ToolError, match="use generate_code to create it"):
        await propose_change(ctx, "refactor", "gone.py", "tidy", workspace=workspace)
    assert llm.requests == []


async def test_a_file_too_large_to_rewrite_whole_is_refused(
    ctx: DuckContext, llm: ScriptedLLM, workspace: Path
) -> None:
    big = "".join(f"value_{i} = {i}\n" for i in range(3000))
    await asyncio.to_thread((workspace / "big.py").write_text, big)
    with pytest.raises(CoderError, match="too large for the coder"):
        await propose_change(ctx, "refactor", "big.py", "tidy", workspace=workspace)
    assert llm.requests == []


def test_a_proposal_round_trips_through_json() -> None:
    proposal = CodeProposal(
        op="fix",
        path="calc.py",
        existed=True,
        old_content=BUGGY,
        new_content=FIXED,
        explanation="guard",
        diff="--- a/calc.py\n",
        syntax_ok=True,
        syntax_error=None,
        attempts=1,
    )
    stored = json.loads(json.dumps(proposal.model_dump(mode="json")))
    assert CodeProposal.model_validate(stored) == proposal


def test_python_syntax_error() -> None:
    assert python_syntax_error("a.py", FIXED) is None
    assert python_syntax_error("notes.txt", BROKEN) is None
    assert python_syntax_error("a.py", "return 1\n") == "line 1: 'return' outside function"
    assert python_syntax_error("a.py", "x = '\\d'\n") is None, "a warning is not an error"
