"""The Agent Protocol door's earlier agent-inbox shape (server/agent_protocol/common/inbox.py)."""

from __future__ import annotations

from ducklm.server.agent_protocol.common.inbox import as_decisions, with_inbox_keys
from ducklm.tools.hitl import build_request, parse_decisions

WRITE = {"name": "file_write", "args": {"path": "a.txt"}, "description": "overwrites a.txt"}
SHELL = {"name": "shell_exec", "args": {"command": "rm a.txt"}}


def test_one_call_gets_the_inbox_keys_beside_the_hitl_ones() -> None:
    request = build_request([(WRITE, ["approve", "reject"])])
    value = with_inbox_keys(request)
    assert value["action_request"] == {"action": "file_write", "args": {"path": "a.txt"}}
    assert value["config"] == {
        "allow_accept": True,
        "allow_edit": False,
        "allow_respond": True,
        "allow_ignore": True,
    }
    assert value["description"] == "overwrites a.txt"
    assert {k: value[k] for k in request} == request


def test_several_calls_or_a_password_question_stay_as_they_are() -> None:
    both = build_request([(WRITE, ["approve"]), (SHELL, ["approve"])])
    assert with_inbox_keys(both) == both
    password = {"type": "password", "call_id": "c1", "command": "sudo ls", "prompt": "?"}
    assert with_inbox_keys(password) == password


def test_inbox_answers_read_as_decisions_the_graph_accepts() -> None:
    request = build_request([(WRITE, ["approve", "edit", "reject"])])
    edited = {"action": "file_write", "args": {"path": "b.txt"}}
    answers = {
        "accept": ({"type": "accept", "args": None}, {"type": "approve"}),
        "ignore": ({"type": "ignore", "args": None}, {"type": "reject"}),
        "response": ({"type": "response", "args": "no"}, {"type": "reject", "message": "no"}),
        "edit": (
            {"type": "edit", "args": edited},
            {"type": "edit", "edited_action": {"name": "file_write", "args": {"path": "b.txt"}}},
        ),
    }
    for answer, decision in answers.values():
        [parsed] = parse_decisions(request, as_decisions([answer]))
        assert parsed.model_dump(exclude_none=True) == decision


def test_other_resume_values_pass_through() -> None:
    decisions = {"decisions": [{"type": "approve"}]}
    assert as_decisions(decisions) is decisions
    assert as_decisions([]) == []
    assert as_decisions([{"type": "approve"}]) == [{"type": "approve"}]
