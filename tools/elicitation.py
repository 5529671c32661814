"""The person's answer to an MCP server's question, read and checked against the question.

An elicitation's `requestedSchema` is a flat object of primitive fields (string,
number, integer, boolean, an enum of strings, a multi-select list of enum strings: the
MCP spec allows no more). An accepted form is checked field by field here, once, at the
door the answer came through (`DuckLM.answer`), and the schema's defaults fill the fields
the person left out (SEP-1034), so the server receives exactly what the form showed.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ducklm.tools.hitl import DecisionError, ElicitAnswer, FormValue, ServerQuestion

ANSWER_SHAPE = (
    'answer with {"action": "accept", "content": {...}}, {"action": "decline"} '
    'or {"action": "cancel"}'
)


def read_elicit_answer(raw: object) -> ElicitAnswer:
    """Read a resume value (`{"action": ..., "content": {...}}`) into an `ElicitAnswer`.

    Raises:
        DecisionError: It is not that shape; the message says what was wrong.
    """
    if isinstance(raw, ElicitAnswer):
        return raw
    if not isinstance(raw, dict) or raw.get("action") not in ("accept", "decline", "cancel"):
        raise DecisionError(ANSWER_SHAPE)
    try:
        return ElicitAnswer.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise DecisionError(f"{where}: {error['msg']}" if where else error["msg"]) from None


def check_elicit_answer(question: ServerQuestion, answer: ElicitAnswer) -> ElicitAnswer:
    """`answer` checked against `question`; an accepted form with its defaults filled in.

    Raises:
        DecisionError: A sampling question or a link (URL mode) answered with content,
            or a form field that is unknown, of the wrong type, not one of its choices,
            or required and missing.
    """
    if answer.action != "accept":
        return answer
    if question["type"] == "sampling":
        if answer.content:
            raise DecisionError("a sampling question takes no content: accept or decline")
        return answer
    if question.get("mode") == "url":
        if answer.content:
            raise DecisionError("a link to open takes no content: accept, decline or cancel")
        return ElicitAnswer(action="accept")
    schema = question.get("requested_schema") or {}
    return ElicitAnswer(action="accept", content=check_form(schema, answer.content or {}))


def check_form(schema: dict[str, Any], content: dict[str, FormValue]) -> dict[str, FormValue]:
    """`content` checked against an elicitation's flat `schema`, its defaults filled in.

    Raises:
        DecisionError: As `check_elicit_answer` says.
    """
    fields: dict[str, Any] = schema.get("properties") or {}
    unknown = sorted(set(content) - set(fields))
    if unknown:
        raise DecisionError(
            f"the form has no field {unknown[0]!r}; its fields: {', '.join(fields)}"
        )
    filled: dict[str, FormValue] = {}
    for name, field in fields.items():
        if name in content:
            filled[name] = _checked(name, field, content[name])
        elif "default" in field:
            filled[name] = field["default"]
    missing = [n for n in schema.get("required") or [] if n not in filled]
    if missing:
        raise DecisionError(f"the field {missing[0]!r} is required")
    return filled


def choices(field: dict[str, Any]) -> list[str]:
    """The values an enum field takes (`enum`, or `oneOf`/`anyOf` of titled `const`s)."""
    if isinstance(field.get("enum"), list):
        return [str(v) for v in field["enum"]]
    titled = field.get("oneOf") or field.get("anyOf") or []
    return [str(o["const"]) for o in titled if isinstance(o, dict) and "const" in o]


def _checked(name: str, field: dict[str, Any], value: FormValue) -> FormValue:
    kind = field.get("type")
    if kind == "array":  # a multi-select: a list of the items' choices
        allowed = choices(field.get("items") or {})
        if not isinstance(value, list) or any(v not in allowed for v in value):
            raise DecisionError(f"the field {name!r} takes a list of: {', '.join(allowed)}")
        return value
    allowed = choices(field)
    if allowed:
        if value not in allowed:
            raise DecisionError(f"the field {name!r} must be one of: {', '.join(allowed)}")
        return value
    if not _is_kind(kind, value):
        article = "an" if str(kind).startswith(("a", "e", "i", "o", "u")) else "a"
        raise DecisionError(f"the field {name!r} must be {article} {kind}, not {value!r}")
    return value


def _is_kind(kind: object, value: FormValue) -> bool:
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, str)  # string, or a field with no type
