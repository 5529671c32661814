"""The reopened conversation on the wire: `GET /v1/conversations/{id}/transcript`.

The shapes of `ducklm.runtime.transcript.Exchange` and what it holds, and the one
function that turns an exchange into its view.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from ducklm.runtime.call_outcomes import CallOutcome, CallRecord, QuestionRecord
from ducklm.runtime.transcript import Exchange
from ducklm.server.responses import EventView, MessageView
from ducklm.server.routes.views import message_view
from ducklm.stores.tasks import TaskStatus


class CallOutcomeView(BaseModel):
    """How one tool call of a past turn was decided."""

    call_id: str
    tool: str
    args: dict[str, object]
    outcome: CallOutcome
    """approved, denied, cancelled (it never ran or was stopped), unknown, repeated, waiting."""
    by: str | None
    """Who approved or denied it: `you`, `policy`, or `rule N`."""
    decision: str | None
    reason: str | None
    label: str
    """The outcome in words, e.g. `denied by you: not now`."""


class QuestionView(BaseModel):
    """A question the turn asked, as asked (`event`), and what its answer was."""

    kind: Literal["approval", "password", "elicitation"]
    outcome: str
    """What the answered card says: `Allowed once`, `Denied`, `Password sent`, `Cancelled`..."""
    call_ids: list[str]
    event: EventView


class ExchangeView(BaseModel):
    """One message of the person and what answered it, as it happened."""

    message: str
    task_id: str | None
    status: TaskStatus | None
    messages: list[MessageView]
    """The turn's stored messages after the person's."""
    partial: str
    """The answer a stopped or failed run had streamed (not in `messages`)."""
    error: str | None
    """A failed turn's reason, for people."""
    calls: list[CallOutcomeView]
    questions: list[QuestionView]
    events: list[EventView]
    """The task's audited events, in order."""
    facts: EventView | None = None
    """The answer's `answer_facts`: model, first token, tokens and rate, whether it was cut."""


class TranscriptView(BaseModel):
    """A conversation as it happened, oldest exchange first."""

    conversation_id: str
    exchanges: list[ExchangeView]


def exchange_view(exchange: Exchange) -> ExchangeView:
    """`exchange` as the web chat reads it."""
    return ExchangeView(
        message=exchange.message,
        task_id=exchange.task_id,
        status=exchange.status,
        messages=[view for view in map(message_view, exchange.messages) if view],
        partial=exchange.partial,
        error=exchange.error,
        calls=[_call_view(call) for call in exchange.calls],
        questions=[_question_view(question) for question in exchange.questions],
        events=[EventView.model_validate(item) for item in exchange.events],
        facts=None if exchange.facts is None else EventView.model_validate(exchange.facts),
    )


def _call_view(call: CallRecord) -> CallOutcomeView:
    return CallOutcomeView(
        call_id=call.call_id,
        tool=call.tool,
        args=call.args,
        outcome=call.outcome,
        by=call.by,
        decision=call.decision,
        reason=call.reason,
        label=call.label,
    )


def _question_view(question: QuestionRecord) -> QuestionView:
    return QuestionView(
        kind=question.kind,
        outcome=question.outcome,
        call_ids=question.call_ids,
        event=EventView.model_validate(question.event),
    )
