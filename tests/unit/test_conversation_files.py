"""The JSONL reader and the Markdown writer of `ducklm.runtime.exports`, without a server."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from ducklm.memory.episodes import speaker_of
from ducklm.models.answer_stream import is_working, working_message
from ducklm.runtime.exports import BadImport, markdown_export, read_jsonl
from ducklm.runtime.exports.jsonl import jsonl_export
from ducklm.runtime.exports.reading import NOT_RUN
from ducklm.runtime.transcript import Exchange
from ducklm.stores import Conversation

HEADER = {"type": "conversation", "format": "ducklm.conversation", "version": 1, "title": "T"}


def _file(*lines: dict[str, object]) -> str:
    return "".join(json.dumps(line) + "\n" for line in (HEADER, *lines))


def test_a_call_without_a_result_is_answered_not_run() -> None:
    calls = [{"id": "c1", "name": "shell_exec", "args": {"command": "rm -rf x"}}]
    found = read_jsonl(
        _file(
            {"type": "message", "role": "user", "content": "clean up"},
            {"type": "message", "role": "assistant", "content": "", "tool_calls": calls},
            {"type": "event", "task_id": "t1", "event": {"type": "approval_requested"}},
            {"type": "message", "role": "assistant", "content": "Asked you first."},
        )
    )
    user, asked, result, answer = found.messages
    assert isinstance(user, HumanMessage)
    assert isinstance(asked, AIMessage)
    assert asked.tool_calls[0]["args"] == {"command": "rm -rf x"}
    assert isinstance(result, ToolMessage)
    assert (result.tool_call_id, result.status, result.text) == ("c1", "error", NOT_RUN)
    assert answer.text == "Asked you first."
    assert found.records == 1
    assert found.header.title == "T"


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        ([{"type": "message", "role": "user", "content": "x", "colour": "red"}], "line 2"),
        ([{"type": "message", "role": "robot", "content": "x"}], "line 2: not a message: `role`"),
        ([{"type": "call"}, ["not", "an", "object"]], "line 3 is not a JSON object"),
    ],
)
def test_a_bad_line_is_named(lines: list[object], said: str) -> None:
    text = json.dumps(HEADER) + "\n" + "".join(json.dumps(line) + "\n" for line in lines)
    with pytest.raises(BadImport, match=said):
        read_jsonl(text)


def test_another_version_is_refused() -> None:
    with pytest.raises(BadImport, match="line 1: not a `conversation` header: `version`"):
        read_jsonl(json.dumps({**HEADER, "version": 2}) + "\n")


def test_markdown_fences_outlast_the_backticks_inside() -> None:
    conversation = Conversation("c", "Fences", None, 0.0, 0.0)
    call = {"id": "c1", "name": "file_read", "args": {"path": "a.md"}}
    turn = [
        AIMessage("", tool_calls=[call]),
        ToolMessage("```python\nprint(1)\n```", tool_call_id="c1", name="file_read"),
        AIMessage("It prints 1."),
    ]
    text = markdown_export(conversation, [Exchange("read a.md", messages=turn)], 0.0)
    assert text.startswith("# Fences\n\n*Exported from DuckLM on 1970-01-01 00:00 UTC")
    assert "Output:\n\n````text\n```python\nprint(1)\n```\n````" in text
    assert text.rstrip().endswith("It prints 1.")


def test_a_steps_result_is_no_answer_in_either_format_and_survives_an_import() -> None:
    conversation = Conversation("c", "Steps", None, 0.0, 0.0)
    turn = [working_message(AIMessage("Handled hello.txt.")), AIMessage("hello.txt says hi.")]
    exchanges = [Exchange("read hello.txt", messages=turn)]
    markdown = markdown_export(conversation, exchanges, 0.0)
    assert "Handled" not in markdown
    assert markdown.endswith("## DuckLM\n\nhello.txt says hi.\n")
    found = read_jsonl(jsonl_export(conversation, exchanges, 0.0))
    step, answer = found.messages[1:]
    assert (is_working(step), step.text, is_working(answer)) == (True, "Handled hello.txt.", False)
    # Search finds what was said: the answer, not the step's working.
    assert (speaker_of(step), speaker_of(answer)) == (None, "assistant")


def test_all_versions_follow_the_one_shown_and_an_import_takes_the_one_shown() -> None:
    conversation = Conversation("c", "Trip", None, 0.0, 0.0)
    shown = [Exchange("where to?", messages=[AIMessage("Stay home.")])]
    other = [Exchange("where to?", messages=[AIMessage("Go to Porto.")])]
    markdown = markdown_export(conversation, shown, 0.0, [other])
    first = markdown.index("Version 1 of 2, the one shown")
    second = markdown.index("Version 2 of 2")
    assert first < markdown.index("Stay home.") < second < markdown.index("Go to Porto.")
    assert "Version 1" not in markdown_export(conversation, shown, 0.0)
    found = read_jsonl(jsonl_export(conversation, shown, 0.0, [other]))
    assert [m.text for m in found.messages] == ["where to?", "Stay home."]
    assert found.records == 1  # the other version, kept in the file
