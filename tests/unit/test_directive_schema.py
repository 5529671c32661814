"""The JSON directive: one branch per tool from the registry, and the few-shot examples."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from ducklm.tools.coder_tools import CODER_TOOL_NAMES
from ducklm.tools.registry import ToolRegistry, default_tools
from ducklm.turn.directive_parse import parse_directive
from ducklm.turn.directive_schema import directive_examples, directive_schema
from tests.support.snapshots import assert_snapshot

OFFERED = default_tools().without(CODER_TOOL_NAMES)


@tool
def quack(times: int, loud: bool = False) -> str:
    """Quack a number of times (a tool the registry gets from elsewhere, e.g. MCP)."""
    return "quack " * times


def _names(schema: dict[str, object]) -> list[str]:
    return [b["properties"]["tool"]["const"] for b in schema["anyOf"]]  # type: ignore[attr-defined, index]


def test_one_branch_per_tool_the_registry_holds() -> None:
    registry = ToolRegistry([*OFFERED.tools, quack])
    schema = directive_schema(registry)
    assert _names(schema) == ["answer", *OFFERED.names, "quack"]
    args = schema["anyOf"][-1]["properties"]["args"]
    assert args["properties"] == {
        "times": {"type": "integer"},
        "loud": {"default": False, "type": "boolean"},
    }
    assert args["required"] == ["times"] and args["additionalProperties"] is False


def test_the_schema_is_pinned() -> None:
    assert_snapshot("directive_schema.json", json.dumps(directive_schema(OFFERED), indent=1) + "\n")


def test_llama_cpp_turns_the_schema_into_a_grammar() -> None:
    """llama-cpp-python falls back to any JSON, silently, when it cannot: it must not here."""
    grammar = pytest.importorskip("llama_cpp.llama_grammar")
    for registry in (OFFERED, default_tools()):
        rules = grammar.json_schema_to_gbnf(json.dumps(directive_schema(registry)))
        assert "list_dir" in rules and "answer" in rules


def test_every_example_is_a_valid_directive_and_every_tool_has_one() -> None:
    messages = directive_examples(OFFERED)
    assert_snapshot(
        "action_examples.txt", "\n".join(f"{m.type}: {m.text}" for m in messages) + "\n"
    )
    requests, directives = messages[::2], messages[1::2]
    assert all(isinstance(m, HumanMessage) for m in requests)
    assert all(isinstance(m, AIMessage) for m in directives)
    used = set()
    for message in directives:
        parsed = parse_directive(message.text, OFFERED)
        used |= {call["name"] for call in parsed.calls}
    assert used == set(OFFERED.names)


def test_examples_of_tools_not_offered_are_left_out() -> None:
    messages = directive_examples(OFFERED.without(["shell_exec"]))
    assert not any("shell_exec" in m.text for m in messages)
    assert any('"answer"' in m.text for m in messages)


@pytest.mark.parametrize(
    ("raw", "calls"),
    [
        ('{"tool": "answer"}', []),
        ('{"tool": "list_dir", "args": {"path": "."}}', [("list_dir", {"path": "."})]),
    ],
)
def test_the_one_call_form_parses(raw: str, calls: list[tuple[str, dict[str, str]]]) -> None:
    directive = parse_directive(raw, OFFERED)
    assert [(c["name"], c["args"]) for c in directive.calls] == calls
