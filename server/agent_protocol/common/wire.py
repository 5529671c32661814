"""JSON as the LangGraph server writes it (`langgraph_api/serde.py`), without its deps.

LangChain messages are dumped with `model_dump()`, dataclasses such as `Interrupt`
field by field (`{"value", "id", "response_schema"}`; an approval question's value also
in the earlier agent-inbox shape, `common/inbox.py`), and an exception becomes
`{"error": <class name>, "message": <text for people>}`: never the exception's own text.
Anything else the encoder does not know becomes `null`, as the LangGraph server does.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import enum
import json
import uuid
from collections import deque
from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from fastapi.responses import Response
from langgraph.types import Interrupt
from pydantic import BaseModel

from ducklm.models.errors import describe
from ducklm.server.agent_protocol.common.inbox import with_inbox_keys


def dumps(value: Any) -> str:
    """`value` as compact JSON text."""
    return json.dumps(value, default=_default, ensure_ascii=False, separators=(",", ":"))


def error_payload(exc: BaseException) -> dict[str, str]:
    """The `error` event and `__error__` shape for a failed run: class name and a message."""
    return {"error": type(exc).__name__, "message": describe(exc)}


class WireResponse(Response):
    """A JSON response encoded with `dumps`, so messages and interrupts keep their shape."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        """Encode `content` as UTF-8 JSON."""
        return dumps(content).encode()


def _fields(value: Any) -> dict[str, Any]:
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def _interrupt(item: Interrupt) -> dict[str, Any]:
    return {**_fields(item), "value": with_inbox_keys(item.value)}


# First match wins; exceptions first, so no exception is ever dumped as an object.
_CONVERSIONS: tuple[tuple[type | tuple[type, ...], Callable[[Any], Any]], ...] = (
    (BaseException, error_payload),
    (Interrupt, _interrupt),
    (BaseModel, lambda v: v.model_dump()),
    ((set, frozenset, deque), list),
    ((datetime.date, datetime.time), lambda v: v.isoformat()),
    ((uuid.UUID, PurePath), str),
    (enum.Enum, lambda v: v.value),
    ((bytes, bytearray), lambda v: base64.b64encode(v).decode()),
)


def _default(value: Any) -> Any:
    for types, convert in _CONVERSIONS:
        if isinstance(value, types):
            return convert(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _fields(value)
    return None
