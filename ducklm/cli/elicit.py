"""An MCP server's question at the terminal: `--elicit` read, or the form's fields prompted.

`ducklm resume THREAD --elicit accept|decline|cancel|'{"field": value}'` answers from
the command line (a JSON object is an accepted form's content; the fields left out take
the form's defaults). In `ducklm chat` the question is shown and each field prompted; a
link (URL mode) is printed, never opened, and only accept, decline or cancel asked.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from ducklm.cli.console import LINK_LINE
from ducklm.tools.elicitation import choices
from ducklm.tools.hitl import DecisionError, ElicitAnswer, FormValue

ACTIONS = ("accept", "decline", "cancel")
BAD_ELICIT = "--elicit takes accept, decline, cancel or a JSON object (the form's content)"


def read_elicit(raw: str) -> ElicitAnswer:
    """`--elicit`'s value as an answer.

    Raises:
        DecisionError: It is neither an action nor a JSON object.
    """
    if raw in ACTIONS:
        return ElicitAnswer.model_validate({"action": raw})
    try:
        content = json.loads(raw)
    except json.JSONDecodeError:
        raise DecisionError(BAD_ELICIT) from None
    if not isinstance(content, dict):
        raise DecisionError(BAD_ELICIT)
    return ElicitAnswer(action="accept", content=content)


async def prompt_answer(request: dict[str, Any]) -> ElicitAnswer:
    """Show the server's question and ask for the answer at the terminal."""
    print(f"{request.get('server')} > {request.get('tool')} asks: {request.get('message')}")
    if request.get("mode") == "url":
        print(LINK_LINE.format(url=request.get("url", "")))
    if request.get("note"):  # how long the server's call waits, or that it is made again
        print(f"  ({request['note']})")
    if request.get("error"):
        print(f"  ({request['error']})", file=sys.stderr)
    action = (await asyncio.to_thread(input, "answer [accept/decline/cancel]> ")).strip()
    if action not in ACTIONS:
        action = "cancel"
    if action != "accept" or request.get("type") != "elicitation" or request.get("mode") == "url":
        return ElicitAnswer.model_validate({"action": action})
    fields = (request.get("requested_schema") or {}).get("properties") or {}
    content: dict[str, FormValue] = {}
    for name, field in fields.items():
        typed = await asyncio.to_thread(input, f"  {_label(name, field)}> ")
        if typed.strip():
            content[name] = _value(field, typed.strip())
    return ElicitAnswer(action="accept", content=content)


def _label(name: str, field: dict[str, Any]) -> str:
    words = field.get("description") or field.get("title") or ""
    kind = "/".join(choices(field)) or str(field.get("type", "string"))
    default = f", Enter for {field['default']!r}" if "default" in field else ""
    return f"{name} ({kind}{default}){': ' + words if words else ''}"


def _value(field: dict[str, Any], typed: str) -> FormValue:
    """What the person typed, as the field's type (the runtime checks it against the form)."""
    kind = field.get("type")
    if kind == "boolean":
        return typed.lower() in ("y", "yes", "true", "1")
    if kind in ("integer", "number"):
        try:
            return int(typed) if kind == "integer" else float(typed)
        except ValueError:
            return typed  # refused, with the field named, by the check
    if kind == "array":
        return [part.strip() for part in typed.split(",") if part.strip()]
    return typed
