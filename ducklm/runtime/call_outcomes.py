"""How each tool call of a past turn was decided, and how each question was answered.

Read from the task's audited events (`tool_call_started`, `tool_call_finished` with
`decision`, `approved_by`, `verdict`, `status`; `approval_requested`,
`password_requested`, `run_started`) and the calls its stored messages hold. Used by
`ducklm.runtime.transcript`; the web chat's live cards read the same fields
(`ui/tool-card.js: callOutcome`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from langchain_core.messages.tool import ToolCall

from ducklm.kit.events import QUESTION_EVENTS, Event
from ducklm.turn.tool_step.plan import BLOCKED
from ducklm.turn.tool_step.repeats import DECLINED
from ducklm.turn.tool_step.run import NO_PASSWORD_REASON

CallOutcome = Literal["approved", "denied", "cancelled", "unknown", "repeated", "waiting"]
OPEN = frozenset({"running", "interrupted"})
UNRUN = frozenset({"cancelled", "waiting"})
BY_PERSON = "you"
DID_NOT_RUN = "it did not run: the task was stopped first"
STOPPED_RUNNING = "the task was stopped while it ran"
FAILED_FIRST = "it did not run: the task failed first"
FAILED_RUNNING = "the task ended while it ran; its outcome is not known"
NOT_RECORDED = "how it was decided is not recorded"
# What an answered approval card says (`ui/question-cards.js`: DECISIONS' outcomes).
DECISION_OUTCOMES = {
    "approve": "Allowed once",
    "allow_forever": "Allowed forever",
    "reject": "Denied",
    "edit": "Edited and allowed",
}


@dataclass(frozen=True)
class CallRecord:
    """One tool call of a turn and how it was decided."""

    call_id: str
    tool: str
    args: dict[str, Any]
    outcome: CallOutcome
    by: str | None = None
    """Who approved or denied it: `you`, `policy`, or `rule N` (an allow-forever rule)."""
    decision: str | None = None
    """The person's decision, when they made one (approve, edit, allow_forever, reject)."""
    reason: str | None = None
    """Why it was denied, or why its outcome is not known."""

    @property
    def label(self) -> str:
        """The outcome in words: `approved by you`, `denied by policy: ...`, `cancelled`."""
        words = f"{self.outcome} by {self.by}" if self.by else self.outcome
        return f"{words}: {self.reason}" if self.reason else words


@dataclass(frozen=True)
class QuestionRecord:
    """A question the turn asked the person, as asked, and its answer."""

    kind: Literal["approval", "password", "elicitation"]
    event: Event
    """The event that asked it (`approval_requested`, `password_requested`, an MCP
    server's `elicitation_requested`)."""
    outcome: str
    """What the answered card says: `Allowed once`, `Denied`, `Password sent`, `Cancelled`..."""
    call_ids: list[str] = field(default_factory=list)

    @property
    def summary(self) -> str:
        """What was asked, in one line."""
        request = self.event.get("request") or {}
        if self.kind == "password":
            return f"sudo password for {request.get('command', '')}"
        if self.kind == "elicitation":
            return f"{request.get('server', '')}: {request.get('message', '')}"
        actions = request.get("action_requests") or []
        return "; ".join(str(a.get("name", "")) for a in actions)


def calls_of(stored: Sequence[ToolCall], events: Sequence[Event], status: str) -> list[CallRecord]:
    """Every call of a turn (its stored ones, then any only the events name), decided."""
    started = {e.get("call_id"): e for e in events if e.get("type") == "tool_call_started"}
    finished = {e.get("call_id"): e for e in events if e.get("type") == "tool_call_finished"}
    calls = {str(c["id"] or ""): (c["name"], c["args"]) for c in stored}
    for item in [*started.values(), *finished.values()]:
        calls.setdefault(str(item.get("call_id")), (item.get("tool", ""), item.get("args") or {}))
    records = []
    for call_id, (tool, args) in calls.items():
        ended = finished.get(call_id)
        if ended is not None:
            records.append(_decided(call_id, tool, args, ended))
        else:
            records.append(_unfinished(call_id, tool, args, status, call_id in started))
    return records


def _decided(call_id: str, tool: str, args: dict[str, Any], ended: Event) -> CallRecord:
    decision = ended.get("decision")
    record = CallRecord(call_id, tool, args, "approved", decision=decision)
    if ended.get("repeat_of"):
        return replace(record, outcome="repeated", reason=ended.get("output"))
    if decision == "reject":
        return replace(record, outcome="denied", by=BY_PERSON, reason=ended.get(DECLINED) or None)
    if ended.get("verdict") == "deny":
        reason = str(ended.get("output") or "").removeprefix(BLOCKED.format(reason=""))
        return replace(record, outcome="denied", by="policy", reason=reason or None)
    if ended.get("status") == "unknown":
        return replace(record, outcome="unknown", reason=ended.get("output"))
    approver = ended.get("approved_by") or "policy"
    return replace(record, by=BY_PERSON if decision or approver == "person" else approver)


def _unfinished(
    call_id: str, tool: str, args: dict[str, Any], status: str, started: bool
) -> CallRecord:
    record = CallRecord(call_id, tool, args, "cancelled")
    if status in OPEN:
        return replace(record, outcome="waiting")
    if status == "cancelled":
        return replace(record, reason=STOPPED_RUNNING if started else DID_NOT_RUN)
    if status == "failed" and not started:
        return replace(record, reason=FAILED_FIRST)
    return replace(record, outcome="unknown", reason=FAILED_RUNNING if started else NOT_RECORDED)


def questions_of(
    events: Sequence[Event], status: str, calls: Sequence[CallRecord]
) -> list[QuestionRecord]:
    """The questions asked in `events` (one task's, in order), with their answers.

    `calls` are the turn's (`calls_of`): a question no call answered asked about the
    calls that never ran.
    """
    records = []
    for index, item in enumerate(events):
        if item.get("type") not in QUESTION_EVENTS:
            continue
        later = events[index + 1 :]
        if item.get("type") == "password_requested":
            records.append(_password(item, later, status))
        elif item.get("type") == "elicitation_requested":
            ids = [str(_call_of(item))] if _call_of(item) else []
            records.append(QuestionRecord("elicitation", item, _unanswered(later, status), ids))
        else:
            records.append(_approval(item, later, status, calls))
    return records


def _approval(
    asked: Event, later: Sequence[Event], status: str, calls: Sequence[CallRecord]
) -> QuestionRecord:
    actions = (asked.get("request") or {}).get("action_requests") or []
    decided = [e for e in later if e.get("type") == "tool_call_finished" and e.get("decision")][
        : len(actions)
    ]
    if not decided:
        names = {a.get("name") for a in actions}
        ids = [c.call_id for c in calls if c.outcome in UNRUN and c.tool in names]
        return QuestionRecord("approval", asked, _unanswered(later, status), ids)
    ids = [str(e.get("call_id")) for e in decided]
    outcomes = {DECISION_OUTCOMES.get(str(e["decision"]), "Answered") for e in decided}
    # One decision for all the actions reads as the card's own answer; mixed ones do not.
    outcome = outcomes.pop() if len(outcomes) == 1 else "Answered"
    return QuestionRecord("approval", asked, outcome, ids)


def _password(asked: Event, later: Sequence[Event], status: str) -> QuestionRecord:
    call_id = _call_of(asked)
    ids = [str(call_id)] if call_id else []
    for item in later:
        if item.get("type") == "password_requested" and _call_of(item) == call_id:
            return QuestionRecord("password", asked, "Password sent", ids)  # it was wrong
        if item.get("type") == "tool_call_finished" and item.get("call_id") == call_id:
            refused = item.get(DECLINED) == NO_PASSWORD_REASON
            outcome = "Cancelled" if refused else "Password sent"
            return QuestionRecord("password", asked, outcome, ids)
    return QuestionRecord("password", asked, _unanswered(later, status), ids)


def _call_of(question: Event) -> Any:
    return (question.get("request") or {}).get("call_id")


def _unanswered(later: Sequence[Event], status: str) -> str:
    """A question none of whose calls finished: answered, still waiting, or abandoned."""
    if any(e.get("type") == "run_started" for e in later):
        return "Answered"  # a run went on from it, and stopped before the calls ended
    if status in OPEN:
        return "Waiting"
    return "Cancelled" if status == "cancelled" else "Closed"
