"""What a turn remembers of its calls, read from its messages (`tool_step/repeats.py`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.messages.tool import ToolCall
from langchain_core.tools import BaseTool

from ducklm.tools.files import FILE_TOOLS, list_dir
from ducklm.tools.shell import shell_exec
from ducklm.turn.tool_step.repeats import (
    DECLINED,
    REPEAT_OF,
    TurnCalls,
    call_key,
    only_repeats,
    repeat_message,
)
from ducklm.turn.tool_step.write_diff import MAX_DIFF_CHARS, overwrite_diff

TOOLS: dict[str, BaseTool] = {t.name: t for t in (*FILE_TOOLS, shell_exec)}


def _call(name: str, id_: str, **args: Any) -> ToolCall:
    return ToolCall(name=name, args=args, id=id_, type="tool_call")


def _step(call: ToolCall, content: str, **facts: Any) -> list[AnyMessage]:
    result = ToolMessage(
        content=content, tool_call_id=call["id"] or "", name=call["name"], artifact=facts or None
    )
    return [AIMessage(content="", tool_calls=[call]), result]


def _turn(*steps: list[AnyMessage]) -> TurnCalls:
    messages: list[AnyMessage] = [HumanMessage("do it")]
    for step in steps:
        messages += step
    return TurnCalls(messages, TOOLS.get)


def test_the_tool_schema_fills_defaults_and_spaces_do_not_count() -> None:
    assert call_key("list_dir", {}, list_dir) == call_key("list_dir", {"path": "."}, list_dir)
    same = call_key("shell_exec", {"command": " rm old.log "}, shell_exec)
    assert same == call_key("shell_exec", {"command": "rm old.log", "cwd": "."}, shell_exec)
    assert same != call_key("shell_exec", {"command": "rm -f old.log"}, shell_exec)


def test_a_declined_call_is_answered_with_the_reason() -> None:
    rm = _call("shell_exec", "c1", command="rm old.log")
    turn = _turn(_step(rm, "the user rejected this call: keep it", **{DECLINED: "keep it"}))
    again = _call("shell_exec", "c2", command="rm old.log")
    assert turn.earlier(again) == "c1"
    earlier = turn.result("c1")
    assert earlier is not None
    message = repeat_message(again, earlier)
    assert message.text == "the user declined this earlier in this turn: keep it"
    assert (message.tool_call_id, message.artifact) == ("c2", {REPEAT_OF: "c1"})


def test_an_earlier_turn_does_not_count() -> None:
    rm = _call("shell_exec", "c1", command="rm old.log")
    messages = [HumanMessage("one"), *_step(rm, "no", **{DECLINED: ""}), HumanMessage("two")]
    turn = TurnCalls(messages, TOOLS.get)
    assert turn.earlier(_call("shell_exec", "c2", command="rm old.log")) is None


def test_a_change_in_between_makes_an_earlier_read_stale() -> None:
    read = _call("file_read", "r1", path="a.txt")
    write = _call("file_write", "w1", path="a.txt", content="x")
    turn = _turn(_step(read, "old"), _step(write, "replaced a.txt"))
    assert turn.earlier(_call("file_read", "r2", path="a.txt")) is None, "runs again"
    assert turn.earlier(_call("file_write", "w2", path="a.txt", content="x")) == "w1"


def test_reads_in_between_keep_a_result() -> None:
    read = _call("file_read", "r1", path="a.txt")
    turn = _turn(_step(read, "old"), _step(_call("list_dir", "l1"), "a.txt"))
    assert turn.earlier(_call("file_read", "r2", path="a.txt")) == "r1"


def test_the_same_call_twice_in_one_step_is_planned_once() -> None:
    turn = _turn()
    assert turn.earlier(_call("file_read", "r1", path="a.txt")) is None
    assert turn.earlier(_call("file_read", "r2", path="a.txt")) == "r1"


def test_a_repeat_of_a_repeat_goes_back_to_the_first() -> None:
    read = _call("file_read", "r1", path="a.txt")
    second = _call("file_read", "r2", path="a.txt")
    turn = _turn(_step(read, "old"), _step(second, "[not run again]", **{REPEAT_OF: "r1"}))
    assert turn.earlier(_call("file_read", "r3", path="a.txt")) == "r1"


def test_a_step_of_repeats_only() -> None:
    read = _call("file_read", "r1", path="a.txt")
    first = [HumanMessage("x"), *_step(read, "old")]
    assert not only_repeats(first)
    again = _step(_call("file_read", "r2", path="a.txt"), "[not run again]", **{REPEAT_OF: "r1"})
    assert only_repeats([*first, *again])
    assert not only_repeats([HumanMessage("x")])


async def test_the_overwrite_diff(tmp_path: Path) -> None:
    await asyncio.to_thread((tmp_path / "a.txt").write_text, "one\ntwo\n")
    diff = await overwrite_diff(tmp_path, "a.txt", "one\nthree\n", None)
    assert diff.startswith("--- a/a.txt\n+++ b/a.txt\n") and "-two\n+three\n" in diff
    assert await overwrite_diff(tmp_path, "a.txt", "one\ntwo\n", None) == "", "no change"
    assert "not text" in await overwrite_diff(tmp_path, "a.txt", 3, None)
    await asyncio.to_thread((tmp_path / "big.txt").write_text, "x\n" * 50_000)
    cut = await overwrite_diff(tmp_path, "big.txt", "y\n", None)
    assert len(cut) < MAX_DIFF_CHARS + 100 and cut.endswith("more lines of the diff not shown\n")
