"""Turning a `NewMemory` into a record: validation, and the scope when none is given."""

from __future__ import annotations

import time
import uuid

from ducklm.memory.records import SCOPES, MemoryRecord, NewMemory, Scope
from ducklm.memory.scope import infer_scope


def new_record(item: NewMemory, now: float | None = None) -> MemoryRecord:
    """A fresh record for `item`, with a new id and timestamps.

    Raises:
        ValueError: Empty text, importance outside 0..1, an unknown scope, or a scope
            without its workspace / conversation id.
    """
    stamp = item.said_at or (time.time() if now is None else now)
    text = clean_text(item.text)
    scope = item.scope or _fitting(infer_scope(text), item)
    if scope not in SCOPES:
        raise ValueError(f"unknown memory scope {scope!r}")
    if scope == "workspace" and not item.workspace:
        raise ValueError("a workspace memory needs its workspace")
    if scope == "conversation" and not item.conversation_id:
        raise ValueError("a conversation memory needs its conversation id")
    return MemoryRecord(
        id=item.id or str(uuid.uuid4()),
        text=text,
        scope=scope,
        workspace=item.workspace,
        conversation_id=item.conversation_id,
        memory_type=item.memory_type,
        importance=check_importance(item.importance),
        created_at=stamp,
        updated_at=stamp,
        superseded_by=None,
        metadata=dict(item.metadata or {}),
    )


def _fitting(scope: Scope, item: NewMemory) -> Scope:
    """The inferred scope, widened when the item lacks what it needs (no workspace...)."""
    if scope == "workspace" and not item.workspace:
        scope = "conversation"
    if scope == "conversation" and not item.conversation_id:
        scope = "global"
    return scope


def clean_text(text: str) -> str:
    """`text` without surrounding whitespace; it must not be empty."""
    text = text.strip()
    if not text:
        raise ValueError("a memory needs some text")
    return text


def check_importance(value: float) -> float:
    """`value` as a float; it must lie in 0..1."""
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"importance must be between 0 and 1, got {value}")
    return float(value)
