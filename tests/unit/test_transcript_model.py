"""The transcript read model on recorded messages and events (no network, no database)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from ducklm.runtime.transcript import build_transcript, transcript_lines
from ducklm.stores import TaskRecord


def _task(task_id: str, message: str, status: Any) -> TaskRecord:
    return TaskRecord(task_id, "T", message, status, 0.0, 0.0, None, None)


def _calls(*names: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"id": f"c-{n}", "name": n, "args": {}} for n in names])


def _finished(task: str, name: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "tool_call_finished",
        "task_id": task,
        "call_id": f"c-{name}",
        "tool": name,
        **fields,
    }


def test_messages_without_a_task_are_shown_as_stored_and_tasks_keep_their_place() -> None:
    messages = [HumanMessage("old"), AIMessage("before tasks"), HumanMessage("new")]
    events = [{"type": "done", "task_id": "t1", "status": "completed", "answer": ""}]
    old, new = build_transcript(messages, [_task("t1", "new", "completed")], events)
    assert (old.message, old.task_id, old.messages[0].text) == ("old", None, "before tasks")
    assert (new.message, new.task_id, new.events) == ("new", "t1", events)


def test_a_task_whose_message_was_never_stored_still_shows_its_failure() -> None:
    events = [
        {"type": "error", "task_id": "t1", "message": "The model server is down.", "fatal": True}
    ]
    (lost,) = build_transcript([], [_task("t1", "hello", "failed")], events)
    assert (lost.message, lost.status, lost.error) == (
        "hello",
        "failed",
        "The model server is down.",
    )


def test_policy_denials_repeats_rules_and_unknown_outcomes_are_labelled() -> None:
    messages = [HumanMessage("go"), _calls("rm", "ls", "cat", "sh", "old")]
    messages.append(ToolMessage("x", tool_call_id="c-old"))
    events = [
        _finished(
            "t", "rm", verdict="deny", status="error", output="blocked by policy: destructive"
        ),
        _finished("t", "ls", verdict="ask", approved_by="rule 3", status="success"),
        _finished("t", "cat", status="error", repeat_of="c-9", output="declined earlier"),
        _finished("t", "sh", status="unknown", output="interrupted, outcome unknown"),
    ]
    (exchange,) = build_transcript(messages, [_task("t", "go", "completed")], events)
    labels = [call.label for call in exchange.calls]
    assert labels == [
        "denied by policy: destructive",
        "approved by rule 3",
        "repeated: declined earlier",
        "unknown: interrupted, outcome unknown",
        "unknown: how it was decided is not recorded",
    ]


def test_password_questions_say_how_they_were_answered() -> None:
    def asked(call_id: str) -> dict[str, Any]:
        request = {"type": "password", "call_id": call_id, "command": "sudo ls", "prompt": "p"}
        return {"type": "password_requested", "task_id": "t", "request": request}

    events = [
        asked("c-a"),
        asked("c-a"),  # the first password was wrong
        _finished("t", "a", status="success", decision="approve"),
        asked("c-b"),
        _finished(
            "t",
            "b",
            status="error",
            decision="approve",
            declined="they did not give the sudo password",
        ),
    ]
    (exchange,) = build_transcript([HumanMessage("go")], [_task("t", "go", "completed")], events)
    outcomes = [q.outcome for q in exchange.questions]
    assert outcomes == ["Password sent", "Password sent", "Cancelled"]


def test_the_text_history_tells_the_same_facts() -> None:
    messages = [HumanMessage("stop"), HumanMessage("write"), _calls("file_write")]
    request = {"action_requests": [{"name": "file_write", "args": {}}], "review_configs": []}
    events = [
        {"type": "done", "task_id": "s", "status": "cancelled", "answer": "Half an ans"},
        {"type": "approval_requested", "task_id": "w", "request": request},
        {"type": "done", "task_id": "w", "status": "cancelled", "answer": ""},
    ]
    tasks = [_task("s", "stop", "cancelled"), _task("w", "write", "cancelled")]
    assert transcript_lines(build_transcript(messages, tasks, events)) == [
        "you: stop",
        "duck: Half an ans",
        "  stopped",
        "you: write",
        "  asked: file_write -> Cancelled",
        "  file_write: cancelled: it did not run: the task was stopped first",
        "  stopped",
    ]


def test_an_mcp_servers_question_is_kept_with_whether_it_was_answered() -> None:
    request = {"server": "files", "tool": "pick", "message": "Which folder?"}
    asked = {"type": "elicitation_requested", "task_id": "t", "request": request}
    answered = [asked, {"type": "run_started", "task_id": "t"}]
    (exchange,) = build_transcript([HumanMessage("go")], [_task("t", "go", "completed")], answered)
    (question,) = exchange.questions
    assert (question.kind, question.outcome, question.summary) == (
        "elicitation",
        "Answered",
        "files: Which folder?",
    )
    (dropped,) = build_transcript([HumanMessage("go")], [_task("t", "go", "cancelled")], [asked])
    assert [q.outcome for q in dropped.questions] == ["Cancelled"]


def test_a_replayed_turn_is_shown_once_with_the_replays_facts() -> None:
    messages = [HumanMessage("hi"), AIMessage("Second answer.")]
    tasks = [_task("first", "hi", "completed"), _task("replay", "hi", "completed")]
    (exchange,) = build_transcript(messages, tasks, [])
    assert (exchange.task_id, exchange.messages[0].text) == ("replay", "Second answer.")
