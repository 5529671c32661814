"""Reading a JSONL export back: every line checked before anything is written.

A bad line is an error that names it (`line 7: ...`), and nothing of the file is kept:
the import writes only once the whole file has been read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from pydantic import BaseModel, ValidationError

from ducklm.models.answer_stream import working_message
from ducklm.runtime.exports.lines import (
    FORMAT,
    RECORD_TYPES,
    HeaderLine,
    MessageLine,
    RecordLine,
)

M = TypeVar("M", bound=BaseModel)
MAX_IMPORT_BYTES = 64 * 1024 * 1024
NOT_RUN = "Not run: this call was imported from a file, where it had no result."
"""The result an imported call without one gets: the model must see every call answered."""
KNOWN = ", ".join(("conversation", "message", *RECORD_TYPES))


class BadImport(ValueError):
    """The file is not a conversation DuckLM can import; the message says where and why."""


@dataclass
class ImportedConversation:
    """What a JSONL export holds that an import keeps."""

    header: HeaderLine
    messages: list[AnyMessage] = field(default_factory=list)
    records: int = 0
    """How many call, question, event and outcome lines it had (kept in the file only)."""


def read_jsonl(text: str) -> ImportedConversation:
    """The conversation in `text` (a JSONL export).

    Raises:
        BadImport: The file is empty, too large, or a line is not what the format says.
    """
    if len(text) > MAX_IMPORT_BYTES:
        raise BadImport(f"the file is larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MiB")
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not numbered:
        raise BadImport("the file is empty: a DuckLM conversation export has a line per message")
    first, header_line = numbered[0]
    header = _parse(first, _object(first, header_line), HeaderLine, "a `conversation` header")
    found = ImportedConversation(header)
    builder = _History(found.messages)
    for number, line in numbered[1:]:
        data = _object(number, line)
        kind = data.get("type")
        if kind == "message":
            builder.add(number, _parse(number, data, MessageLine, "a message"))
        elif kind in RECORD_TYPES:
            _parse(number, data, RecordLine, f"a {kind} record")
            found.records += 1
        else:
            raise BadImport(f"line {number}: unknown line type {kind!r} (expected {KNOWN})")
    builder.close()
    return found


def _object(number: int, line: str) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise BadImport(f"line {number} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadImport(f"line {number} is not a JSON object")
    return data


def _parse(number: int, data: dict[str, Any], model: type[M], what: str) -> M:
    if model is HeaderLine and data.get("type") != "conversation":
        raise BadImport(
            f"line {number}: a DuckLM conversation export starts with its `conversation` line "
            f'({{"type": "conversation", "format": "{FORMAT}", ...}})'
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise BadImport(f"line {number}: not {what}: `{where}`: {error['msg']}") from None


class _History:
    """Messages from `message` lines, each tool result matched to the call it answers."""

    def __init__(self, messages: list[AnyMessage]) -> None:
        self.messages = messages
        self.open_calls: dict[str, str] = {}
        """Calls of the last assistant message still without a result: id -> tool."""

    def add(self, number: int, line: MessageLine) -> None:
        if line.role == "tool":
            self.messages.append(self._result(number, line))
            return
        self.close()
        if line.role == "user":
            self.messages.append(HumanMessage(line.content))
            return
        calls = [{"id": c.id, "name": c.name, "args": c.args} for c in line.tool_calls]
        said = AIMessage(line.content, tool_calls=calls)
        self.messages.append(working_message(said) if line.working else said)
        self.open_calls = {c.id: c.name for c in line.tool_calls}

    def _result(self, number: int, line: MessageLine) -> ToolMessage:
        call_id = line.tool_call_id or ""
        if call_id not in self.open_calls:
            raise BadImport(
                f"line {number}: a tool result for call {call_id!r}, which the assistant "
                "message before it did not make"
            )
        name = line.name or self.open_calls.pop(call_id)
        self.open_calls.pop(call_id, None)
        return ToolMessage(
            line.content, tool_call_id=call_id, name=name, status=line.status or "success"
        )

    def close(self) -> None:
        """Answer the last assistant message's calls that had no result: they are not run."""
        for call_id, name in self.open_calls.items():
            self.messages.append(
                ToolMessage(NOT_RUN, tool_call_id=call_id, name=name, status="error")
            )
        self.open_calls = {}
