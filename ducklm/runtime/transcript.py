"""A conversation as it happened: the read model a reopened conversation is shown from.

The checkpoint holds the messages the model saw, but not what only the person saw: the
partial answer of a stopped run, a failed turn's error, how each tool call was decided,
the questions asked. The audit log holds those (`ducklm.kit.events`; the `done` of a
stopped or failed run carries the text it had streamed). `build_transcript` joins the
two: one `Exchange` per message of the person, with its task's facts. The web chat
(`GET /v1/conversations/{id}/transcript`) and `ducklm history` show the same exchanges.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from ducklm.kit.events import Event
from ducklm.models.answer_stream import is_working
from ducklm.runtime.call_outcomes import CallRecord, QuestionRecord, calls_of, questions_of
from ducklm.stores import RunStores, TaskRecord, TaskStatus

ENDED_BADLY = frozenset({"cancelled", "failed"})
TASKS_SHOWN = 500
"""The newest tasks whose facts a transcript joins; older messages are shown as stored."""
FAILED_TEXT = "The task failed."
"""A failed turn's message when its run recorded none (an older DuckLM)."""


@dataclass(frozen=True)
class Exchange:
    """One message of the person and what answered it, as the person saw it."""

    message: str
    task_id: str | None = None
    """`None` for a message whose task is not recorded (older, or pruned)."""
    status: TaskStatus | None = None
    messages: list[AnyMessage] = field(default_factory=list)
    """The turn's stored messages after the person's (answers, tool calls, results)."""
    partial: str = ""
    """The answer a stopped (or failed) run had streamed when it ended: not in `messages`."""
    error: str | None = None
    """Why a failed turn failed, in words for people (never exception text)."""
    calls: list[CallRecord] = field(default_factory=list)
    """Every tool call of the turn, in order, with how it was decided."""
    questions: list[QuestionRecord] = field(default_factory=list)
    """The questions the turn asked the person, with their answers."""
    events: list[Event] = field(default_factory=list)
    """The task's audited events, in order (the route, the plan, the tool results)."""
    facts: Event | None = None
    """The answer's `answer_facts` (model, first token, tokens, rate, cut), if one streamed."""


async def read_transcript(
    stores: RunStores,
    thread_id: str,
    messages: Sequence[AnyMessage],
    *,
    hidden: Collection[str] = (),
) -> list[Exchange]:
    """The exchanges of `thread_id` whose checkpointed `messages` are given, oldest first.

    `hidden`: tasks left out (they answered on another branch, `runtime.branches`).
    """
    listed = await stores.tasks.list(thread_id, limit=TASKS_SHOWN)
    tasks = [task for task in listed if task.task_id not in hidden]
    events = [record.data for record in await stores.audit.list(thread_id)]
    return build_transcript(messages, tasks[::-1], events)


def build_transcript(
    messages: Sequence[AnyMessage], tasks: Sequence[TaskRecord], events: Sequence[Event]
) -> list[Exchange]:
    """The exchanges of a conversation, oldest first.

    Args:
        messages: The thread's checkpointed messages.
        tasks: Its tasks, oldest first.
        events: Its audited events, in order (each names its `task_id`).
    """
    by_task: dict[str, list[Event]] = {}
    for item in events:
        by_task.setdefault(str(item.get("task_id") or ""), []).append(item)
    segments = _segments(messages)
    exchanges: list[Exchange] = []
    cursor = 0
    for task in tasks:
        found = next(
            (i for i in range(cursor, len(segments)) if segments[i][0] == task.message), None
        )
        task_events = by_task.get(task.task_id, [])
        if found is not None:
            # Messages between two tasks' own have no recorded task: shown as they are.
            exchanges += [Exchange(text, messages=rest) for text, rest in segments[cursor:found]]
            exchanges.append(_exchange(task, segments[found][1], task_events))
            cursor = found + 1
        elif exchanges and exchanges[-1].task_id and exchanges[-1].message == task.message:
            # A replay of the last turn: its fork is what the checkpoint holds now.
            exchanges[-1] = _exchange(task, exchanges[-1].messages, task_events)
        elif task.status in ENDED_BADLY:
            # Stopped or failed before its message was stored: the person saw it all the same.
            exchanges.append(_exchange(task, [], task_events))
    exchanges += [Exchange(text, messages=rest) for text, rest in segments[cursor:]]
    return exchanges


def _segments(messages: Sequence[AnyMessage]) -> list[tuple[str, list[AnyMessage]]]:
    """Each message of the person with the messages that follow it, up to the next."""
    segments: list[tuple[str, list[AnyMessage]]] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            segments.append((message.text, []))
        elif segments:
            segments[-1][1].append(message)
    return segments


def _exchange(task: TaskRecord, turn: list[AnyMessage], events: list[Event]) -> Exchange:
    done = next((e for e in reversed(events) if e.get("type") == "done"), None)
    ended_badly = task.status in ENDED_BADLY
    stored_calls = [c for m in turn if isinstance(m, AIMessage) for c in m.tool_calls]
    calls = calls_of(stored_calls, events, task.status)
    return Exchange(
        task.message,
        task.task_id,
        task.status,
        messages=turn,
        partial=str(done.get("answer") or "") if done is not None and ended_badly else "",
        error=_error(task, events),
        calls=calls,
        questions=questions_of(events, task.status, calls),
        events=events,
        facts=next((e for e in reversed(events) if e.get("type") == "answer_facts"), None),
    )


def _error(task: TaskRecord, events: list[Event]) -> str | None:
    if task.status != "failed":
        return None
    fatal = [e for e in events if e.get("type") == "error" and e.get("fatal")]
    if fatal:
        return str(fatal[-1].get("message") or FAILED_TEXT)
    return task.error or FAILED_TEXT


def transcript_lines(exchanges: Sequence[Exchange]) -> list[str]:
    """The exchanges as plain text, for `ducklm history`: the same facts the web chat shows."""
    lines: list[str] = []
    for exchange in exchanges:
        lines.append(f"you: {exchange.message}")
        lines += _turn_lines(exchange)
    return lines


def _turn_lines(exchange: Exchange) -> list[str]:
    """The turn in the order it happened: text, each question before its calls, the end."""
    calls = {call.call_id: call for call in exchange.calls}
    questions = list(exchange.questions)
    lines: list[str] = []
    for message in exchange.messages:
        if isinstance(message, AIMessage) and message.text and not is_working(message):
            lines.append(f"duck: {message.text}")
        ids = (
            [str(c["id"] or "") for c in message.tool_calls]
            if isinstance(message, AIMessage)
            else []
        )
        for call_id in ids:
            lines += _asked_about(questions, call_id)
            if (call := calls.pop(call_id, None)) is not None:
                lines.append(f"  {call.tool}: {call.label}")
    lines += [f"  asked: {q.summary} -> {q.outcome}" for q in questions]
    lines += [f"  {call.tool}: {call.label}" for call in calls.values()]
    if exchange.partial:
        lines.append(f"duck: {exchange.partial}")
    if exchange.facts is not None:
        lines.append(f"  ({facts_text(exchange.facts)})")
    if exchange.error:
        lines.append(f"  failed: {exchange.error}")
    elif exchange.status == "cancelled":
        lines.append("  stopped")
    return lines


def _asked_about(questions: list[QuestionRecord], call_id: str) -> list[str]:
    """The lines of the questions that asked about `call_id`, taken from `questions`."""
    asked = [q for q in questions if call_id in q.call_ids]
    for question in asked:
        questions.remove(question)
    return [f"  asked: {q.summary} -> {q.outcome}" for q in asked]


def facts_text(facts: Event) -> str:
    """An answer's facts in a few words: `scripted · first token 0.4 s · 12 tokens, 30/s`."""
    parts = [str(facts.get("model") or "no model (a tool's result)")]
    parts.append(f"first token {facts.get('first_token_s', 0):g} s")
    rate = facts.get("tokens_per_s")
    tokens = f"{facts.get('tokens', 0)} tokens"
    parts.append(f"{tokens}, {rate:g}/s" if rate else tokens)
    if facts.get("cut"):
        parts.append(f"cut ({facts['cut']})")
    if facts.get("prompt_cut"):
        parts.append("prompt cut to fit")
    return " · ".join(parts)
