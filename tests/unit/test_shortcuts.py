"""Rule shortcuts: the requests whose tool and arguments the text alone makes certain."""

from __future__ import annotations

from typing import Any

import pytest

from ducklm.turn.router import Route, RouteFacts, decide_route
from ducklm.turn.shortcuts import Shortcut, find_shortcut

TOOLS = frozenset({"file_read", "file_write", "list_dir", "search_files", "shell_exec"})
FACTS = RouteFacts(tools=TOOLS, shortcuts=True)

# The five requests of issue 16, then more phrasings of each kind.
TAKEN = [
    ("List the files in the workspace.", "list_dir", {"path": "."}),
    ("What is in notes.md?", "file_read", {"path": "notes.md"}),
    (
        "Create a file called todo.txt containing 'buy milk'.",
        "file_write",
        {"path": "todo.txt", "content": "buy milk"},
    ),
    ("How many lines does notes.md have?", "shell_exec", {"command": "wc -l -- notes.md"}),
    ("Search the workspace for the word 'duck'.", "search_files", {"query": "duck"}),
    ("show me app.py", "file_read", {"path": "app.py"}),
    ("Please list all files", "list_dir", {"path": "."}),
    ("list the files in the docs folder", "list_dir", {"path": "docs"}),
    ("What files are here?", "list_dir", {"path": "."}),
    ("Can you search for duck?", "search_files", {"query": "duck"}),
    ('Which files mention "pond"?', "search_files", {"query": "pond"}),
    ("write \u201chi\u201d to a.txt", "file_write", {"path": "a.txt", "content": "hi"}),
    ("cat src/app.py", "file_read", {"path": "src/app.py"}),
    ("What does notes.md say?", "file_read", {"path": "notes.md"}),
    ("count the lines in my notes.md", "shell_exec", {"command": "wc -l -- notes.md"}),
]
# Anything more than the one call, or less than certain, goes to the model.
LEFT_TO_THE_MODEL = [
    "Read notes.md and summarize it",
    "What is the capital of France?",
    "show me how to cook",
    "List the files in the workspace and then delete them",
    "What is in the pond?",
    "Create a file called todo.txt",
    "Hello!",
    "Search for the best way to sort a list in Python and explain it",
    "How many lines does a poem have?",
    "What is in notes.md?\nAnd in todo.md?",
]


@pytest.mark.parametrize(("task", "tool", "args"), TAKEN, ids=[t for t, _, _ in TAKEN])
def test_a_certain_request_gets_its_call(task: str, tool: str, args: dict[str, Any]) -> None:
    shortcut = find_shortcut(task, TOOLS)
    assert shortcut is not None
    assert (shortcut.tool, shortcut.args) == (tool, args)
    assert shortcut.rule in shortcut.reason() and tool in shortcut.reason()


@pytest.mark.parametrize("task", LEFT_TO_THE_MODEL)
def test_anything_else_is_left_to_the_model(task: str) -> None:
    assert find_shortcut(task, TOOLS) is None


def test_a_tool_that_is_not_offered_is_never_proposed() -> None:
    assert find_shortcut("What is in notes.md?", TOOLS - {"file_read"}) is None


def test_a_quoted_path_in_a_command_stays_one_argument() -> None:
    shortcut = find_shortcut("How many lines does my-notes.md have?", TOOLS)
    assert shortcut is not None and shortcut.args == {"command": "wc -l -- my-notes.md"}


def test_the_route_carries_the_shortcut_only_where_facts_allow() -> None:
    route = decide_route("List the files in the workspace.", FACTS)
    assert route.shortcut == Shortcut("list_dir", {"path": "."}, "list the files")
    # Native tool callers pick these well: no shortcut unless the facts ask for them.
    assert (
        decide_route("List the files in the workspace.", RouteFacts(tools=TOOLS)).shortcut is None
    )


def test_a_planned_request_gets_no_shortcut() -> None:
    route = decide_route("1. list the files 2. read notes.md", FACTS)
    assert route.plan and route.shortcut is None


def test_the_event_says_which_rule_and_round_trips() -> None:
    fields = decide_route("What is in notes.md?", FACTS).event_fields()
    assert fields["shortcut"] == {
        "tool": "file_read",
        "args": {"path": "notes.md"},
        "rule": "what is in a file",
        "reason": "The request names its tool and arguments (what is in a file): "
        'file_read {"path": "notes.md"}.',
    }
    assert Route(**fields) == decide_route("What is in notes.md?", FACTS)
