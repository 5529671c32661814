"""Tool cues: the requests that go to the thinker with no directive, and the ones that don't."""

from __future__ import annotations

import pytest

from ducklm.turn.router import Route, RouteFacts, decide_route
from ducklm.turn.shortcuts import NO_TOOL, Shortcut
from ducklm.turn.tool_cues import MAX_WORDS, needs_no_tool, tool_cue

TOOLS = frozenset(
    {"file_read", "file_write", "list_dir", "search_files", "shell_exec", "search_conversations"}
)
FACTS = RouteFacts(tools=TOOLS, shortcuts=True)

# General knowledge and writing with nothing of the machine in them.
NO_TOOL_NEEDED = [
    "What is the capital of Peru?",
    "How tall is Mount Everest?",
    "What's the boiling point of water?",
    "Summarize the theory of relativity.",
    "How many legs does a spider have?",
    "Give me three names for a cat.",
    "Why is the ocean salty?",
    "Tell me a short poem about autumn.",
    "Who painted the Mona Lisa?",
    "What is 12 times 7?",
]
# Each names something a tool could answer: the model decides, as before.
CUED = [
    # the five requests of issue 16
    ("List the files in the workspace.", "List"),
    ("What is in notes.md?", "notes.md"),
    ("Create a file called todo.txt containing 'buy milk'.", "todo.txt"),
    ("How many lines does notes.md have?", "notes.md"),
    ("Search the workspace for the word 'duck'.", "'"),
    # the machine, the workspace, and acting on them
    ("What does the readme say?", "readme"),
    ("Which Python version do I have?", "Python"),
    ("Is the server up?", "server"),
    ("clean up", "clean"),
    ("Show me the src/ tree", "/"),
    ("What is `x`?", "`"),
    ("Compute sha256 of hello_world", "_"),
    ("Tidy the project", "project"),
    # time, and what was said before
    ("What time is it?", "time"),
    ("What did we decide yesterday?", "yesterday"),
    ("What is my name?", "my"),
    ("Remind me what the plan was", "Remind"),
    # references back
    ("Do it again", "it"),
    ("And the other one?", "other"),
    ("What is here?", "here"),
]


@pytest.mark.parametrize("task", NO_TOOL_NEEDED)
def test_a_request_with_no_cue_needs_no_tool(task: str) -> None:
    assert tool_cue(task) is None
    assert needs_no_tool(task, TOOLS)


@pytest.mark.parametrize(("task", "cue"), CUED, ids=[t for t, _ in CUED])
def test_a_cue_leaves_the_request_to_the_model(task: str, cue: str) -> None:
    assert tool_cue(task) == cue
    assert not needs_no_tool(task, TOOLS)


def test_an_apostrophe_is_not_a_quote() -> None:
    assert tool_cue("Why don't cats like water?") is None
    assert tool_cue("Say 'hi'") == "'"


def test_long_or_multi_line_requests_are_left_to_the_model() -> None:
    assert tool_cue("Why is the sky blue?\nAnd the sea?") == "several lines"
    long = " ".join(["why"] * (MAX_WORDS + 1))
    assert tool_cue(long) == f"more than {MAX_WORDS} words"


def test_an_unknown_tool_on_offer_means_the_model_decides() -> None:
    assert not needs_no_tool("Who painted the Mona Lisa?", TOOLS | {"weather__forecast"})
    assert not needs_no_tool("   ", TOOLS)


def test_the_route_says_no_tool_and_why() -> None:
    route = decide_route("Who painted the Mona Lisa?", FACTS)
    assert route.shortcut is not None and route.shortcut.tool == NO_TOOL
    fields = route.event_fields()
    assert "shows no sign of needing a tool" in fields["shortcut"]["reason"]
    assert Route(**fields) == route  # the event's dict reads back as the same route


def test_a_greeting_needs_no_tool() -> None:
    route = decide_route("Hello!", FACTS)
    assert route.shortcut == Shortcut(NO_TOOL, rule="a greeting or a thanks")


def test_no_tool_only_where_the_facts_allow() -> None:
    question = "Who painted the Mona Lisa?"
    # Native tool callers decide themselves; configured MCP servers could be meant.
    assert decide_route(question, RouteFacts(tools=TOOLS)).shortcut is None
    with_mcp = RouteFacts(tools=TOOLS, shortcuts=True, other_tools=True)
    assert decide_route(question, with_mcp).shortcut is None
    assert decide_route("Hello!", with_mcp).shortcut is None
    # A tool shortcut still applies beside MCP servers: the request names its call.
    assert decide_route("What is in notes.md?", with_mcp).shortcut is not None
    running = RouteFacts(tools=TOOLS, shortcuts=True, plan_running=True)
    assert decide_route(question, running).shortcut is None
