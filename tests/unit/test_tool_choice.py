"""Choosing the tool by meaning, file names, direct answers, the scaffolding check, and
the card's flag for a destructive call the request did not ask for."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from ducklm.graph.state import DuckState
from ducklm.memory.embeddings import LocalEmbedder
from ducklm.tools.policy import Verdict
from ducklm.turn.answers.direct import direct_answer
from ducklm.turn.answers.guard import TokenGate
from ducklm.turn.answers.scaffolding import BUNDLED, PROMPT_TEXTS, sentences
from ducklm.turn.choosing.exemplars import EXEMPLARS, NONE, Exemplar
from ducklm.turn.choosing.names import Names, resolve_args, workspace_names
from ducklm.turn.choosing.selector import ToolSelector, choose, fit
from ducklm.turn.router import Route, merge_selection
from ducklm.turn.shortcuts import NO_TOOL, Shortcut
from ducklm.turn.tool_step.intent import request_mismatch
from ducklm.turn.tool_step.questions import Asking, _action_request

SET = Path(__file__).parents[2] / "scripts" / "bench" / "small_model_set.yaml"
TOOLS = frozenset(
    {"file_read", "file_write", "list_dir", "search_files", "shell_exec", "search_conversations"}
)
# Phrasings of no exemplar and of neither half of the bench's set.
UNSEEN = [
    ("Show me what my notes file contains", "file_read"),
    ("Which files live in this workspace?", "list_dir"),
    ("Write 'ducks at dawn' into a new file dawn.txt", "file_write"),
    ("What is today's date?", "shell_exec"),
    ("What did I tell you about my brother last week?", "search_conversations"),
    ("Which files contain the word bread?", "search_files"),
]
NAMES = Names(files=("notes.md", "todo.md", "app.py", "docs/guide.md"), folders=("docs",))


def test_the_exemplars_are_the_train_half_of_the_set() -> None:
    requests = yaml.safe_load(SET.read_text())["requests"]
    train = [(r["text"], r["tool"], r.get("args") or {}) for r in requests if r["split"] == "train"]
    assert [(e.request, e.tool, e.args) for e in EXEMPLARS] == train
    held_out = {r["text"] for r in requests if r["split"] == "test"}
    assert not held_out & {e.request for e in EXEMPLARS}
    assert not {text for text, _ in UNSEEN} & ({r["text"] for r in requests})


@pytest.fixture(scope="module")
def embedder() -> Iterator[LocalEmbedder]:
    yield LocalEmbedder("all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def selector() -> ToolSelector:
    """One selector: its classifier is trained once (per embedder)."""
    return ToolSelector()


@pytest.mark.parametrize(("request_text", "tool"), UNSEEN)
async def test_the_selector_picks_the_tool_of_an_unseen_phrasing(
    embedder: LocalEmbedder, selector: ToolSelector, request_text: str, tool: str
) -> None:
    selection = await selector.select(request_text, TOOLS, embedder.embed)
    assert selection is not None and selection.tool == tool, selection
    examples = [selector.exemplar(request) for request in selection.examples]
    assert examples and all(e is not None and e.tool == tool for e in examples)


async def test_the_selector_only_picks_offered_tools(
    embedder: LocalEmbedder, selector: ToolSelector
) -> None:
    offered = TOOLS - {"shell_exec"}
    selection = await selector.select("What is today's date?", offered, embedder.embed)
    assert selection is None or selection.tool != "shell_exec"


def test_the_classifier_learns_separable_classes() -> None:
    rows = np.eye(3, dtype=np.float32)[[0, 0, 1, 1, 2, 2]]
    exemplars = [Exemplar(f"r{i}", t, {"x": 1}) for i, t in enumerate("aabbcc")]
    exemplars = [Exemplar(e.request, NONE if e.tool == "c" else e.tool, e.args) for e in exemplars]
    classifier = fit(rows, [e.tool for e in exemplars])
    picked = choose(classifier, rows[2], rows, exemplars, frozenset({"a", "b"}))
    assert picked is not None and picked.tool == "b" and picked.examples == ("r2", "r3")
    # An unoffered class is not chosen; what is left is renormalised.
    without_b = choose(classifier, rows[2], rows, exemplars, frozenset({"a"}))
    assert without_b is None or without_b.tool != "b"


def test_a_selection_of_no_tool_is_the_no_tool_shortcut() -> None:
    from ducklm.turn.choosing.selector import Selection

    route = Route(recall=False, plan=False, coder=False, critique=False, reasons=["", "", "", ""])
    none = merge_selection(route, Selection(NONE, 0.8))
    assert none.shortcut is not None and none.shortcut.tool == NO_TOOL and none.selected is None
    tool = merge_selection(route, Selection("file_read", 0.7, ("What does my notes file say?",)))
    assert tool.selected is not None and tool.shortcut is None
    # Through the event's JSON and back (a checkpoint read without the types).
    again = Route(**tool.event_fields())
    assert again.selected == tool.selected


@pytest.mark.parametrize(
    ("tool", "args", "request_text", "expected"),
    [
        ("file_read", {"path": "notes"}, "What does my notes file say?", {"path": "notes.md"}),
        ("file_read", {"path": "todo.md"}, "Tell me what's in the notes", {"path": "notes.md"}),
        ("file_read", {"path": "the guide"}, "Read the guide", {"path": "docs/guide.md"}),
        ("file_read", {"path": "app.py"}, "Show me the code", {"path": "app.py"}),
        ("file_read", {"path": "nothing.txt"}, "Show the file", {"path": "nothing.txt"}),
        ("list_dir", {"path": "docs"}, "What files are here?", {"path": "."}),
        ("list_dir", {"path": "."}, "List everything under docs", {"path": "docs"}),
        ("shell_exec", {"command": "wc -w notes"}, "count words", {"command": "wc -w notes.md"}),
        (
            "shell_exec",
            {"command": "wc -w todo.md"},
            "Give me the word count of notes.md",
            {"command": "wc -w notes.md"},
        ),
        ("file_write", {"path": "notes"}, "Save notes", {"path": "notes"}),
    ],
)
def test_file_names_resolve_against_the_workspace(
    tool: str, args: dict[str, str], request_text: str, expected: dict[str, str]
) -> None:
    assert resolve_args(tool, args, request_text, NAMES) == expected


def test_the_workspace_names_leave_out_hidden_folders(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / ".git").mkdir()
    for name in ("notes.md", "docs/guide.md", ".git/config", ".env"):
        (tmp_path / name).write_text("x")
    assert workspace_names(tmp_path) == Names(("notes.md", "docs/guide.md"), ("docs",))


def _turn(call: dict[str, object], result: str, *, status: str = "success") -> DuckState:
    route = Route(
        recall=False,
        plan=False,
        coder=False,
        critique=False,
        reasons=["", "", "", ""],
        shortcut=Shortcut(str(call["name"]), dict(call["args"]), "rule"),  # type: ignore[arg-type]
    )
    tool_call = {"name": call["name"], "args": call["args"], "id": "c1", "type": "tool_call"}
    messages = [
        HumanMessage("ask"),
        AIMessage(content="", tool_calls=[tool_call]),  # type: ignore[list-item]
        ToolMessage(content=result, tool_call_id="c1", name=str(call["name"]), status=status),
    ]
    return DuckState(messages=messages, route=route)  # type: ignore[arg-type]


def test_a_file_read_is_answered_by_the_file() -> None:
    state = _turn({"name": "file_read", "args": {"path": "notes.md"}}, "three ducks\n")
    assert direct_answer(state) == "`notes.md`:\n\n```\nthree ducks\n```"


def test_a_command_that_worked_is_answered_by_its_output() -> None:
    state = _turn({"name": "shell_exec", "args": {"command": "date"}}, "exit code 0\nTue Dec 2\n")
    assert direct_answer(state) == "`date` printed:\n\n```\nTue Dec 2\n```"
    failed = _turn({"name": "shell_exec", "args": {"command": "nope"}}, "exit code 127\nnope?")
    assert direct_answer(failed) is None
    error = _turn({"name": "file_read", "args": {"path": "x"}}, "no such file", status="error")
    assert direct_answer(error) is None


def test_the_scaffolding_comes_from_the_prompts() -> None:
    # Every sentence of every shipped prompt counts, not a list of examples.
    for text in PROMPT_TEXTS:
        for sentence in sentences(text):
            if "{" not in sentence:  # a template's fields are wildcards, tested below
                assert BUNDLED.is_scaffolding(sentence), sentence


def test_scaffolding_is_cut_from_an_answer() -> None:
    check = BUNDLED.plus(["The tool step limit ({n}) was reached; answer with what you have."])
    answer = (
        "notes.md has three ducks. The tool step limit (4) was reached; answer with what you "
        "have.\n[tool search_files result]\nBe brief and concrete. Ana likes bread."
    )
    assert check.clean(answer) == "notes.md has three ducks. Ana likes bread."
    # Words the person or a tool said are theirs, not scaffolding.
    kept = "The file says: Be brief and concrete."
    assert check.clean(kept, allowed="Be brief and concrete.") == kept


def test_a_prompt_sentence_in_other_words_is_scaffolding_too() -> None:
    copied = (
        "- If a tool failed, was refused by the user, or the work was cut short, say so clearly."
    )
    assert BUNDLED.clean(f"{copied}\nThe notes list three ducks.") == "The notes list three ducks."
    ordinary = "The pond has three ducks, and a duck named Ana likes bread at noon."
    assert BUNDLED.clean(ordinary) == ordinary


def test_the_stream_is_held_to_each_sentence_and_cleaned() -> None:
    seen: list[dict[str, object]] = []
    gate = TokenGate(seen.append, lambda: (BUNDLED, ""))
    for piece in ["Ducks swim. Be brief", " and concrete. They", " quack."]:
        gate({"type": "token", "text": piece})
    gate({"type": "done"})
    assert (
        "".join(str(e["text"]) for e in seen if e["type"] == "token") == "Ducks swim. They quack."
    )
    assert seen[-1]["type"] == "done"


def test_a_destructive_command_for_a_rename_is_flagged() -> None:
    rm = Verdict("ask", "rm deletes draft.txt", command_class="destructive")
    flag = request_mismatch("Rename draft.txt to final.txt", "shell_exec", rm)
    assert flag.startswith("Does not match the request")
    assert request_mismatch("Delete draft.txt", "shell_exec", rm) == ""
    writes = Verdict("ask", "writes outside", command_class="system")
    assert request_mismatch("Rename draft.txt", "shell_exec", writes) == ""
    call = {"name": "shell_exec", "args": {"command": "rm draft.txt"}, "id": "c1"}
    card = _action_request(Asking(call, rm, flag))  # type: ignore[arg-type]
    assert card["description"] == f"{flag} rm deletes draft.txt"


@pytest.mark.parametrize(
    "answer", ["answer " * 20, "the the the the the the the the", "tool " * 12]
)
def test_a_word_said_over_and_over_is_no_prompt_phrase(answer: str) -> None:
    """Distinct words count: a repeated word shares one word with a phrase, not twenty."""
    assert BUNDLED.clean(answer) == answer.strip()
