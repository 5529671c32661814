"""Parsing of approval decisions and json-mode directives."""

from __future__ import annotations

import pytest

from ducklm.tools.hitl import (
    ActionRequest,
    Approve,
    DecisionError,
    Decisions,
    Edit,
    EditedAction,
    Reject,
    build_request,
    check_decisions,
    parse_decisions,
    read_decisions,
)
from ducklm.tools.registry import default_tools
from ducklm.turn.directive_parse import DirectiveError, parse_directive

ACTION: ActionRequest = {"name": "file_write", "args": {"path": "a"}}
REQUEST = build_request(
    [
        (ACTION, ["approve", "edit", "reject"]),
        ({"name": "file_write", "args": {"path": "b"}}, ["approve", "reject", "allow_forever"]),
    ]
)


def test_request_shape_is_langchain_hitl() -> None:
    assert REQUEST["review_configs"][1] == {
        "action_name": "file_write",
        "allowed_decisions": ["approve", "reject", "allow_forever"],
    }


def test_decisions_in_order() -> None:
    decisions = parse_decisions(
        REQUEST,
        {
            "decisions": [
                {"type": "edit", "edited_action": {"name": "file_write", "args": {"path": "c"}}},
                {"type": "reject", "message": "no"},
            ]
        },
    )
    assert decisions == [
        Edit(edited_action=EditedAction(name="file_write", args={"path": "c"})),
        Reject(message="no"),
    ]


def test_typed_decisions_travel_unchanged_and_an_edit_names_its_tool() -> None:
    typed = Decisions(decisions=[Approve(), Edit(edited_action=EditedAction(args={"x": 1}))])
    assert read_decisions(typed) is typed
    request = build_request([(ACTION, ["approve"]), (ACTION, ["edit"])])
    _, edit = check_decisions(request, typed).decisions
    assert edit.model_dump() == {
        "type": "edit",
        "edited_action": {"name": "file_write", "args": {"x": 1}},
    }
    assert Decisions(decisions=[Reject()]).wire() == {"decisions": [{"type": "reject"}]}


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("approve", "must be"),
        ({"decisions": [{"type": "approve"}]}, r"2 decision\(s\) expected"),
        ({"decisions": [{"type": "allow_forever"}, {"type": "approve"}]}, "not one of"),
        ({"decisions": ["approve", {"type": "approve"}]}, "must be an object"),
        ({"decisions": [{"type": "reject", "message": 3}, {"type": "approve"}]}, "message"),
        ({"decisions": [{"type": "approve", "mesage": "typo"}, {"type": "approve"}]}, "mesage"),
        ({"decisions": [{"type": "perhaps"}, {"type": "approve"}]}, "'perhaps' is not one of"),
    ],
)
def test_bad_decisions(response: object, expected: str) -> None:
    with pytest.raises(DecisionError, match=expected):
        parse_decisions(REQUEST, response)


def test_directive_becomes_tool_calls() -> None:
    directive = parse_directive(
        '```json\n{"reasoning": "r", "actions": [{"tool": "list_dir", "args": {}}]}\n```',
        default_tools(),
    )
    assert directive.reasoning == "r"
    (tool_call,) = directive.calls
    assert (tool_call["name"], tool_call["args"]) == ("list_dir", {})
    assert tool_call["id"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("not json", "not valid JSON"),
        ('{"reasoning": "r"}', '"tool": "answer"'),
        ('{"actions": [{"tool": "nope", "args": {}}]}', "unknown tool 'nope'"),
        ('{"actions": [{"tool": "file_read", "args": {}}]}', "bad arguments for file_read"),
        ('{"actions": [{"tool": "file_read", "args": [1]}]}', "must be an object"),
        ('{"actions": [' + ",".join(['{"tool": "list_dir"}'] * 5) + "]}", "at most 4"),
    ],
)
def test_bad_directives(raw: str, expected: str) -> None:
    with pytest.raises(DirectiveError, match=expected):
        parse_directive(raw, default_tools())
