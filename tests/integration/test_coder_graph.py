"""The coder tools through the whole graph: offered only for code work, the proposal and
its diff in the events, approval with the diff for an existing file, and a rejected
write that leaves the file as it was."""

from __future__ import annotations

import asyncio
import json
from collections import deque
from pathlib import Path
from typing import Any

import pytest

from ducklm.runtime.facade import DuckLM
from tests.support.scripted_llm import Reply, ScriptedLLM, call, reply

BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"


class Model:
    """The coder role answers by schema name; the action role (with tools) from a queue."""

    def __init__(self) -> None:
        self.code: deque[dict[str, str]] = deque()
        self.actions: deque[Reply] = deque()
        self.offered: list[list[str]] = []
        self.coder_requests: list[str] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema == "code_change":
            self.coder_requests.append(body["messages"][-1]["content"])
            return reply(json.dumps(self.code.popleft()))
        assert "tools" in body, body
        self.offered.append([t["function"]["name"] for t in body["tools"]])
        return self.actions.popleft()


@pytest.fixture
def model(llm: ScriptedLLM) -> Model:
    script = Model()
    llm.set_responder(script)
    return script


async def test_generate_code_writes_a_new_file_and_shows_the_diff(
    duck: DuckLM, model: Model, workspace: Path
) -> None:
    model.actions.extend([
        reply(tool_calls=[call("generate_code", path="calc.py", instructions="add two numbers")]),
        reply("calc.py now has add()."),
    ])  # fmt: skip
    model.code.append({"content": FIXED, "explanation": "add returns the sum"})
    result = await duck.run("Write a function add in calc.py", critic=False, memory=False)
    assert result.status == "completed", result.events
    (route,) = [e for e in result.events if e["type"] == "route_decided"]
    assert route["coder"] is True
    assert "generate_code" in model.offered[0]
    (proposed,) = [e for e in result.events if e["type"] == "code_proposed"]
    assert proposed["existed"] is False and proposed["syntax_ok"] is True
    assert "+    return a + b" in proposed["diff"]
    (finished,) = [e for e in result.events if e["type"] == "tool_call_finished"]
    assert finished["status"] == "success" and finished["approved_by"] == "policy"
    assert finished["diff"] == proposed["diff"]
    assert await asyncio.to_thread((workspace / "calc.py").read_text) == FIXED
    assert "add two numbers" in model.coder_requests[0]


@pytest.mark.parametrize("decision", ["approve", "reject"])
async def test_fix_code_asks_with_the_diff_and_writes_only_when_approved(
    duck: DuckLM, model: Model, workspace: Path, decision: str
) -> None:
    target = workspace / "calc.py"
    await asyncio.to_thread(target.write_text, BROKEN)
    error = "assert add(1, 2) == 3"
    model.actions.append(reply(tool_calls=[call("fix_code", path="calc.py", error=error)]))
    model.code.append({"content": FIXED, "explanation": "plus, not minus"})
    paused = await duck.run(
        "Fix the bug in calc.py: add(1, 2) gives -1", thread_id="c", critic=False, memory=False
    )
    assert paused.status == "interrupted", paused.events
    (pending,) = paused.pending
    (asked,) = pending["request"]["action_requests"]
    assert asked["name"] == "fix_code"
    assert "overwrite existing file calc.py" in asked["description"]
    assert "-    return a - b\n+    return a + b" in asked["description"]
    allowed = pending["request"]["review_configs"][0]["allowed_decisions"]
    assert "edit" not in allowed and "approve" in allowed
    assert error in model.coder_requests[0] and BROKEN in model.coder_requests[0]

    model.actions.append(reply("Done." if decision == "approve" else "Left it as it was."))
    events = [e async for e in duck.resume("c", [{"type": decision}])]
    assert events[-1]["status"] == "completed", events
    (finished,) = [e for e in events if e["type"] == "tool_call_finished"]
    written = await asyncio.to_thread(target.read_text)
    if decision == "approve":
        assert finished["status"] == "success"
        assert written == FIXED
    else:
        assert finished["output"].startswith("the user rejected this call")
        assert written == BROKEN
    # The resume wrote (or not) what was proposed: the coder was asked once.
    assert len(model.coder_requests) == 1


async def test_turns_without_code_work_are_not_offered_the_coder(
    duck: DuckLM, model: Model
) -> None:
    model.actions.append(reply("Hello!"))
    await duck.run("Tell me about the pond", critic=False, memory=False)
    assert model.offered[0]
    assert not {"generate_code", "fix_code", "refactor_code"} & set(model.offered[0])


async def test_a_change_that_cannot_be_written_asks_nobody(
    duck: DuckLM, model: Model, workspace: Path
) -> None:
    target = workspace / "calc.py"
    await asyncio.to_thread(target.write_text, BROKEN)
    model.actions.extend([
        reply(tool_calls=[call("fix_code", path="calc.py", error="wrong sign")]),
        reply("The coder could not fix it."),
    ])  # fmt: skip
    broken = {"content": "def add(a, b)\n    return a + b\n", "explanation": "fixed"}
    model.code.extend([broken, broken])  # still broken after its one retry
    result = await duck.run("Fix the bug in calc.py", critic=False, memory=False)
    assert result.status == "completed", result.events
    (proposed,) = [e for e in result.events if e["type"] == "code_proposed"]
    assert proposed["syntax_ok"] is False
    (finished,) = [e for e in result.events if e["type"] == "tool_call_finished"]
    assert finished["status"] == "error" and "syntax error" in finished["output"]
    assert await asyncio.to_thread(target.read_text) == BROKEN
