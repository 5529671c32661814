"""The JSON-directive shape a tiny model cannot get wrong, built from the tools offered.

A directive is one object: `{"tool": "answer"}` (no tool: answer now) or
`{"tool": "<name>", "args": {...}}`. The schema gives every tool a branch of its own, its
name a constant and its arguments that tool's own schema, so a grammar (llama-server's
`json_schema`, llama-cpp-python's `json_object` with a schema) lets the model write only
a real tool with arguments of the right types, or the explicit answer. The branches come
from whatever the `ToolRegistry` holds (MCP tools too), never from a fixed list.

Measured on the bundled SmolLM2-135M with few-shot examples as chat turns: the tool name
first and an explicit "answer" chose the right kind of step for 9 of 15 requests; the
older envelope `{"reasoning", "actions": [...]}` under the same grammar, 5 of 15 (it
answered `"actions": []` for nearly everything).

The few-shot examples live in `prompts/roles/action_examples.md`; an example whose tool the
turn does not offer is left out, so an example never names a tool the grammar forbids.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from ducklm.tools.registry import ToolRegistry

ANSWER = "answer"
"""The directive's "tool" when no tool is needed."""
EXAMPLES_FILE = "roles/action_examples.md"
REQUEST_MARK = "Request: "
# Keys that only describe: the tool list in the prompt says it once, and every key in a
# grammar is more for a tiny model to get through.
DESCRIPTIVE_KEYS = frozenset({"title", "description", "examples"})


@lru_cache(maxsize=32)
def directive_schema(tools: ToolRegistry) -> dict[str, Any]:
    """The directive's JSON schema for these tools: one branch per tool, "answer" first.

    "answer" comes first: in a grammar the first branch is no more likely than the others,
    but in a prompt the schema is read in order, and a request without a tool is the
    common case. Registries are immutable and shared (`ToolRegistry.without` keeps one
    per tool set), so the schema is built once per set.
    """
    branches: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {"tool": {"const": ANSWER}},
            "required": ["tool"],
            "additionalProperties": False,
        }
    ]
    for name in tools.names:
        branches.append(
            {
                "type": "object",
                "properties": {"tool": {"const": name}, "args": _args_schema(tools, name)},
                "required": ["tool", "args"],
                "additionalProperties": False,
            }
        )
    return {"title": "ActionDirective", "anyOf": branches}


@lru_cache(maxsize=32)
def call_schema(tools: ToolRegistry) -> dict[str, Any]:
    """The directive's schema without "answer": a call to one of `tools`.

    For a turn whose tool is already chosen (`ducklm.turn.choosing`): offered only that
    tool, the model can write nothing but its arguments.
    """
    return {"title": "ToolCall", "anyOf": directive_schema(tools)["anyOf"][1:]}


def _args_schema(tools: ToolRegistry, name: str) -> dict[str, Any]:
    schema = tools.model_schema(name)
    if "$defs" in schema:
        # References into `$defs` break once nested in a branch; the arguments are still
        # checked against the tool's own schema when the directive is parsed.
        return {"type": "object"}
    args: dict[str, Any] = _plain(schema)
    args.setdefault("properties", {})
    args["type"] = "object"
    args["additionalProperties"] = False
    return args


def _plain(schema: Any) -> Any:
    """`schema` without its descriptive keys, at every level."""
    if isinstance(schema, dict):
        return {k: _plain(v) for k, v in schema.items() if k not in DESCRIPTIVE_KEYS}
    if isinstance(schema, list):
        return [_plain(v) for v in schema]
    return schema


def directive_examples(tools: ToolRegistry) -> list[BaseMessage]:
    """The few-shot examples for these tools, as request/directive chat turns.

    A tiny model copies the shape of earlier turns far better than it follows examples
    written into the system prompt, so they go in as a conversation before the real one.
    """
    messages: list[BaseMessage] = []
    for request, directive in EXAMPLES:
        if directive["tool"] == ANSWER or tools.get(directive["tool"]) is not None:
            messages += [HumanMessage(request), AIMessage(json.dumps(directive))]
    return messages


def _read_examples() -> tuple[tuple[str, dict[str, Any]], ...]:
    """The examples file as (request, directive) pairs."""
    text = resources.files("ducklm.prompts").joinpath(EXAMPLES_FILE).read_text("utf-8")
    pairs = []
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for index, line in enumerate(lines):
        if line.startswith(REQUEST_MARK):
            pairs.append((line.removeprefix(REQUEST_MARK), json.loads(lines[index + 1])))
    return tuple(pairs)


# Read at import, like the prompts when the runtime opens: never a file read on the loop.
EXAMPLES = _read_examples()
