"""Reading the directive a model wrote: checked against the schema and the tools offered.

A directive that cannot be used raises `DirectiveError`, whose message is shown to the
model for its one repair (`ducklm.nodes.action_json`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages.tool import ToolCall
from pydantic import ValidationError

from ducklm.config.yaml_files import validation_details
from ducklm.tools.registry import ToolRegistry
from ducklm.turn.directive_schema import ANSWER
from ducklm.turn.prompting.structured import JSONReplyError, parse_json

MAX_DIRECTIVE_ACTIONS = 4


@dataclass
class Directive:
    """A parsed, checked directive."""

    reasoning: str
    calls: list[ToolCall] = field(default_factory=list)


class DirectiveError(ValueError):
    """The directive cannot be used; the message is shown to the model for repair."""


def parse_directive(raw: Any, tools: ToolRegistry) -> Directive:
    """Check a decoded directive against the schema and the known tools.

    A directive is `{"tool": "answer"}`, `{"tool": ..., "args": {...}}`, or the envelope
    `{"reasoning": ..., "actions": [...]}` (an empty list: answer).

    Raises:
        DirectiveError: It is none of these, names an unknown tool, or has arguments the
            tool does not accept.
    """
    if isinstance(raw, str):
        try:
            raw = parse_json(raw)
        except JSONReplyError as exc:
            raise DirectiveError(str(exc)) from None
    if isinstance(raw, dict) and isinstance(raw.get("tool"), str):
        if raw["tool"] == ANSWER:
            return Directive(reasoning="")
        return Directive(reasoning="", calls=[_to_call(0, raw, tools)])
    if not isinstance(raw, dict) or not isinstance(raw.get("actions"), list):
        raise DirectiveError(
            'the reply must be {"tool": "<name>", "args": {...}} or {"tool": "answer"}'
        )
    actions = raw["actions"]
    if len(actions) > MAX_DIRECTIVE_ACTIONS:
        raise DirectiveError(f"at most {MAX_DIRECTIVE_ACTIONS} actions per reply")
    calls = [_to_call(i, action, tools) for i, action in enumerate(actions)]
    reasoning = raw.get("reasoning")
    return Directive(reasoning=reasoning if isinstance(reasoning, str) else "", calls=calls)


def _to_call(index: int, action: Any, tools: ToolRegistry) -> ToolCall:
    if not isinstance(action, dict) or not isinstance(action.get("tool"), str):
        raise DirectiveError(f'action {index + 1} must be an object with a "tool" name')
    name, args = action["tool"], action.get("args") or {}
    tool = tools.get(name)
    if tool is None:
        raise DirectiveError(f"unknown tool {name!r}; the tools are {', '.join(tools.names)}")
    if not isinstance(args, dict):
        raise DirectiveError(f'"args" of action {index + 1} must be an object')
    schema = tool.tool_call_schema
    try:
        if not isinstance(schema, dict):  # an MCP tool's server checks its own arguments
            schema.model_validate(args)  # type: ignore[union-attr]
    except ValidationError as exc:
        problems = validation_details(exc)
        raise DirectiveError(f"bad arguments for {name}: {problems}") from None
    return ToolCall(name=name, args=args, id=f"call_{uuid.uuid4().hex[:12]}", type="tool_call")
