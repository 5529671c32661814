"""How the Store API's items are DuckLM's memories: namespaces, keys, values and text.

The Store API (`/store/...`) and DuckLM's memory share one set of records (the
`memories` table, its vectors and its BM25 index). This module is the mapping:

| Store namespace | DuckLM memory |
| --- | --- |
| `("memories", "global")` | scope `global` (recalled in every conversation) |
| `("memories", "workspace", <path>)` | scope `workspace` of that (allowed) folder |
| `("memories", "conversation", <thread_id>)` | scope `conversation` of that thread |
| any other, e.g. `("users", "42")` | scope `conversation` of `store:users.42`: never recalled |

Any other includes `("memories", <user_id>)`, as LangGraph's memory guides write it.
No thread has an id like `store:users.42` (thread ids are UUIDs). A workspace path is
one label with `%` and `.` written `%25` and `%2E` (labels cannot hold a period). An
item's key maps to a stable memory id (`memory_id`); a memory DuckLM wrote has its id as
its key. The item's `value` is kept as JSON in the memory's metadata; the memory's text
is `value["text"]`, else `value["content"]`, else a rendering of the whole dict (`key:
value; ...`), so any dict is searchable.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from ducklm.memory.records import MemoryRecord, Scope

ROOT = "memories"
PRIVATE_PREFIX = "store:"
"""The pseudo conversation id of an application namespace (thread ids are UUIDs)."""
META = "langgraph_store"
"""The memory's metadata key that holds the item's namespace, key and value."""
TEXT_FIELDS = ("text", "content")
# Keys are scoped by namespace in the Store API, ids are global in DuckLM's table: the id
# is a UUID5 of both, so the same item always lands on the same memory.
_ID_SPACE = uuid.UUID("2f6b0c4e-7d1a-5e39-9c2b-6a8d4f1e0b73")

Namespace = tuple[str, ...]


class BadNamespace(ValueError):
    """A namespace the Store API cannot take; the message says why, for people."""


@dataclass(frozen=True)
class Placement:
    """Where an item's memory lives: its scope and the folder or thread that scope needs."""

    scope: Scope
    workspace: str | None = None
    conversation_id: str | None = None


def check_labels(labels: Any, *, allow_empty: bool = False) -> Namespace:
    """`labels` as a namespace: non-empty strings without periods.

    Raises:
        BadNamespace: Not a list of such strings (or empty when not allowed).
    """
    if not isinstance(labels, (list, tuple)):
        raise BadNamespace("namespace must be a list of labels (strings)")
    if not labels and not allow_empty:
        raise BadNamespace("namespace must have at least one label")
    for label in labels:
        if not isinstance(label, str) or not label or "." in label:
            raise BadNamespace(
                f"namespace label {label!r} must be a non-empty string without periods"
            )
    return tuple(labels)


def placement(namespace: Namespace) -> Placement:
    """The scope an item of `namespace` is stored in (the workspace is not yet checked).

    The three scope namespaces are DuckLM's memory; every other one, under `memories`
    too (LangGraph's memory guides use `("memories", <user_id>)`), is the application's.
    """
    rest = namespace[1:] if namespace[:1] == (ROOT,) else None
    if rest == ("global",):
        return Placement("global")
    if rest is not None and len(rest) == 2 and rest[0] == "workspace":
        return Placement("workspace", workspace=decode_label(rest[1]))
    if rest is not None and len(rest) == 2 and rest[0] == "conversation":
        return Placement("conversation", conversation_id=rest[1])
    return Placement("conversation", conversation_id=PRIVATE_PREFIX + ".".join(namespace))


def scope_namespace(record: MemoryRecord) -> Namespace:
    """The namespace a memory DuckLM wrote is shown under (its scope's)."""
    if record.scope == "workspace" and record.workspace:
        return (ROOT, "workspace", encode_label(record.workspace))
    if record.scope == "conversation" and record.conversation_id:
        return (ROOT, "conversation", record.conversation_id)
    return (ROOT, "global")


def encode_label(text: str) -> str:
    """`text` (a folder path) as a namespace label: `%` and `.` escaped."""
    return text.replace("%", "%25").replace(".", "%2E")


def decode_label(label: str) -> str:
    """The text `encode_label` wrote."""
    return label.replace("%2E", ".").replace("%25", "%")


def memory_id(namespace: Namespace, key: str) -> str:
    """The id of the memory that holds item `key` of `namespace`."""
    return str(uuid.uuid5(_ID_SPACE, json.dumps([list(namespace), key])))


def text_field(value: dict[str, Any]) -> str | None:
    """The field of `value` that is the memory's text, if it has one."""
    return next(
        (f for f in TEXT_FIELDS if isinstance(value.get(f), str) and value[f].strip()), None
    )


def text_of(value: dict[str, Any]) -> str:
    """The memory's text for `value`: its text field, or the whole dict rendered."""
    field = text_field(value)
    if field is not None:
        return str(value[field])
    parts = [f"{k}: {v if isinstance(v, str) else json.dumps(v)}" for k, v in value.items()]
    return "; ".join(parts) or "{}"


def item_metadata(namespace: Namespace, key: str, value: dict[str, Any]) -> dict[str, Any]:
    """What the memory keeps of the item beside its text."""
    return {META: {"namespace": list(namespace), "key": key, "value": value}}


@dataclass(frozen=True)
class ItemView:
    """A memory seen as a Store item."""

    namespace: Namespace
    key: str
    value: dict[str, Any]
    record: MemoryRecord


def as_item(record: MemoryRecord) -> ItemView:
    """`record` as the Store API shows it.

    An item put through the API keeps its namespace, key and value; its text field
    follows the memory's text, which DuckLM's memory policy may have updated since. A
    memory DuckLM wrote is `{"text", "kind", "importance"}` under its scope's namespace,
    keyed by its id.
    """
    kept = record.metadata.get(META)
    if isinstance(kept, dict):
        value = dict(kept["value"])
        field = text_field(value)
        if field is not None:
            value[field] = record.text
        return ItemView(tuple(kept["namespace"]), str(kept["key"]), value, record)
    value = {"text": record.text, "kind": record.memory_type, "importance": record.importance}
    return ItemView(scope_namespace(record), record.id, value, record)


@dataclass(frozen=True)
class ScopeQuery:
    """The `MemoryStore.list` filters that find DuckLM's own memories under a prefix."""

    scope: Scope | None = None
    workspace: str | None = None
    conversation_id: str | None = None


def scope_query(prefix: Namespace) -> ScopeQuery | None:
    """The filters of DuckLM's memories under `prefix`; `None` when none can be there.

    Only the scope namespaces hold memories DuckLM wrote; the caller still checks each
    record's namespace against `prefix` (`under`).
    """
    if prefix[:1] not in ((), (ROOT,)):
        return None
    rest = prefix[1:]
    if not rest:
        return ScopeQuery()
    named = rest[1] if len(rest) == 2 else None
    if rest == ("global",):
        return ScopeQuery("global")
    if rest[0] == "workspace" and len(rest) <= 2:
        return ScopeQuery("workspace", workspace=decode_label(named) if named else None)
    if rest[0] == "conversation" and len(rest) <= 2:
        return ScopeQuery("conversation", conversation_id=named)
    return None


def under(namespace: Namespace, prefix: Namespace) -> bool:
    """Whether `namespace` is `prefix` or inside it."""
    return namespace[: len(prefix)] == prefix


def fits(namespace: Namespace, pattern: Namespace, *, at_end: bool = False) -> bool:
    """Whether `namespace` starts (or ends, `at_end`) with `pattern`; `*` is any label."""
    if len(namespace) < len(pattern):
        return False
    part = namespace[len(namespace) - len(pattern) :] if at_end else namespace[: len(pattern)]
    return all(want in ("*", have) for have, want in zip(part, pattern, strict=True))
