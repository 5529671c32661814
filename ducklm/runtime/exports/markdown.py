"""A conversation as Markdown, for people: who said what, and each tool call with its outcome."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Sequence

from langchain_core.messages import AIMessage, ToolMessage

from ducklm.models.answer_stream import is_working
from ducklm.runtime.call_outcomes import CallRecord, QuestionRecord
from ducklm.runtime.transcript import Exchange
from ducklm.stores import Conversation

OUTPUT_CHARS = 4000
"""A tool's output is shown up to this many characters (the JSONL export keeps it all)."""
CUT_NOTE = "[... {count} more characters: the JSONL export has them all]"


def markdown_export(
    conversation: Conversation,
    exchanges: Sequence[Exchange],
    exported_at: float,
    others: Sequence[Sequence[Exchange]] = (),
) -> str:
    """The conversation as one Markdown document.

    `exchanges` is the version shown; `others`, the other versions (regenerated or
    edited messages), each written whole after it under a line that names it.
    """
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(exported_at))
    where = f", workspace `{conversation.workspace}`" if conversation.workspace else ""
    parts = [
        f"# {conversation.title.strip() or 'Conversation'}",
        f"*Exported from DuckLM on {when}: conversation `{conversation.id}`{where}.*",
    ]
    count = len(others) + 1
    for index, version in enumerate([exchanges, *others], start=1):
        if count > 1:
            shown = ", the one shown" if index == 1 else ""
            parts += ["---", f"**Version {index} of {count}{shown}**"]
        for exchange in version:
            parts += ["## You", exchange.message]
            parts += list(_turn(exchange))
    return "\n\n".join(parts) + "\n"


def _turn(exchange: Exchange) -> Iterator[str]:
    """The answer side of one exchange, in the order it happened."""
    calls = {call.call_id: call for call in exchange.calls}
    asked = {i for q in exchange.questions for i in q.call_ids}
    said_heading = False
    for message in exchange.messages:
        if not said_heading:
            yield "## DuckLM"
            said_heading = True
        if isinstance(message, AIMessage):
            if message.text and not is_working(message):  # answers only, as the chat shows
                yield message.text
            for call in message.tool_calls:
                call_id = str(call["id"] or "")
                yield from _questions_about(exchange.questions, call_id, asked)
                yield _call_block(call["name"], call["args"], calls.get(call_id))
        elif isinstance(message, ToolMessage):
            yield _output_block(message.text)
    if exchange.partial:
        yield f"{exchange.partial}\n\n*(stopped before the answer was finished)*"
    if exchange.error:
        yield f"**Failed:** {exchange.error}"
    elif exchange.status == "cancelled" and not exchange.partial:
        yield "*(stopped)*"


def _questions_about(
    questions: Sequence[QuestionRecord], call_id: str, unsaid: set[str]
) -> Iterator[str]:
    if call_id not in unsaid:
        return
    unsaid.discard(call_id)
    for question in questions:
        if call_id in question.call_ids:
            yield f"> Asked you: {question.summary} — **{question.outcome}**"


def _call_block(tool: str, args: dict[str, object], record: CallRecord | None) -> str:
    outcome = f" — {record.label}" if record is not None else ""
    arguments = json.dumps(args, ensure_ascii=False, indent=2)
    return f"**Tool call `{tool}`**{outcome}\n\n{_fenced(arguments, 'json')}"


def _output_block(text: str) -> str:
    shown = text
    if len(text) > OUTPUT_CHARS:
        shown = text[:OUTPUT_CHARS] + "\n" + CUT_NOTE.format(count=len(text) - OUTPUT_CHARS)
    return f"Output:\n\n{_fenced(shown, 'text')}"


def _fenced(text: str, language: str) -> str:
    """`text` in a code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
