"""A conversation as JSONL: its messages plus each turn's calls, questions, events, outcome."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from ducklm.models.answer_stream import is_working
from ducklm.runtime.exports.lines import HeaderLine
from ducklm.runtime.transcript import Exchange
from ducklm.stores import Conversation


def jsonl_export(
    conversation: Conversation,
    exchanges: Sequence[Exchange],
    exported_at: float,
    others: Sequence[Sequence[Exchange]] = (),
) -> str:
    """The conversation as JSONL text (`ducklm.runtime.exports.lines`), one object a line.

    `exchanges` is the version shown; `others`, the other versions, each written as one
    `version` line after it (an import takes the version shown as history).
    """
    header = HeaderLine(
        id=conversation.id,
        title=conversation.title,
        workspace=conversation.workspace,
        created_at=conversation.created_at,
        updated_at=conversation.updated_at,
        exported_at=exported_at,
    )
    lines = [header.model_dump()]
    for exchange in exchanges:
        lines += _exchange_lines(exchange)
    for index, version in enumerate(others, start=2):
        said = [line for exchange in version for line in _exchange_lines(exchange)]
        lines.append({"type": "version", "index": index, "of": len(others) + 1, "lines": said})
    return "".join(json.dumps(line, ensure_ascii=False, default=str) + "\n" for line in lines)


def _exchange_lines(exchange: Exchange) -> Iterator[dict[str, Any]]:
    task = {"task_id": exchange.task_id} if exchange.task_id else {}
    yield {"type": "message", "role": "user", "content": exchange.message, **task}
    for message in exchange.messages:
        line = message_line(message)
        if line is not None:
            yield line
    if exchange.task_id is None:
        return
    for call in exchange.calls:
        yield {"type": "call", **task, **asdict(call), "label": call.label}
    for question in exchange.questions:
        yield {"type": "question", **task, **asdict(question), "summary": question.summary}
    for item in exchange.events:
        yield {"type": "event", **task, "event": item}
    yield {
        "type": "outcome",
        **task,
        "status": exchange.status,
        "partial": exchange.partial,
        "error": exchange.error,
    }


def message_line(message: AnyMessage) -> dict[str, Any] | None:
    """A stored message as a `message` line; `None` for kinds a conversation does not show."""
    if isinstance(message, HumanMessage):
        return {"type": "message", "role": "user", "content": message.text}
    if isinstance(message, AIMessage):
        line: dict[str, Any] = {"type": "message", "role": "assistant", "content": message.text}
        if is_working(message):
            line["working"] = True
        if message.tool_calls:
            line["tool_calls"] = [
                {"id": c["id"], "name": c["name"], "args": c["args"]} for c in message.tool_calls
            ]
        return line
    if isinstance(message, ToolMessage):
        return {
            "type": "message",
            "role": "tool",
            "content": message.text,
            "tool_call_id": message.tool_call_id,
            "name": message.name,
            "status": message.status,
        }
    return None
