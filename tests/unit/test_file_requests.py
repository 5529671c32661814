"""File operations read from a request: the shortcut each phrasing gets, and the card that
says when a call does something else (issue 44).

`WRITTEN` are the phrasings the rules were written from; `HELD_OUT` were written after
the rules, in other styles (lowercase, shell words, the object first, a wish instead of
an order, quoted and nested paths), and were not used to shape them.
"""

from __future__ import annotations

from typing import Any

import pytest

from ducklm.tools.policy import Verdict
from ducklm.turn.file_requests import FileRequest, mentioned_operation, read_file_request
from ducklm.turn.router import RouteFacts, decide_route, wants_selection
from ducklm.turn.shortcuts import find_shortcut
from ducklm.turn.tool_step.intent import card_warning

TOOLS = frozenset(
    {"file_read", "file_write", "list_dir", "search_files", "shell_exec"}
    | {"file_delete", "file_move", "file_copy", "file_append"}
    | {"generate_code", "fix_code", "refactor_code"}
)
D, R, M, C, A = "delete", "rename", "move", "copy", "append"

WRITTEN: list[tuple[str, FileRequest]] = [
    ("Delete old.log", FileRequest(D, "old.log")),
    ("Please delete the file old.log.", FileRequest(D, "old.log")),
    ("get rid of the old.log file", FileRequest(D, "old.log")),
    ("Could you remove notes/old.md for me?", FileRequest(D, "notes/old.md")),
    ("old.log can go", FileRequest(D, "old.log")),
    ("old.log should be deleted", FileRequest(D, "old.log")),
    ("Trash the 'my notes.txt' file", FileRequest(D, "my notes.txt")),
    ("delete the logs folder", FileRequest(D, "logs")),
    ("remove the folder called build", FileRequest(D, "build")),
    ("Rename draft.txt to final.txt", FileRequest(R, "draft.txt", "final.txt")),
    ("rename draft.txt as final.txt please", FileRequest(R, "draft.txt", "final.txt")),
    ("change the name of draft.txt to final.txt", FileRequest(R, "draft.txt", "final.txt")),
    ("could you call draft.txt final.txt instead", FileRequest(R, "draft.txt", "final.txt")),
    ("draft.txt should be called final.txt", FileRequest(R, "draft.txt", "final.txt")),
    ("give draft.txt the name final.txt", FileRequest(R, "draft.txt", "final.txt")),
    ("rename docs/draft.txt to final.txt", FileRequest(R, "docs/draft.txt", "docs/final.txt")),
    ("Move notes.txt to archive", FileRequest(M, "notes.txt", "archive/")),
    ("move notes.txt into the archive folder", FileRequest(M, "notes.txt", "archive/")),
    ("Move report.pdf to docs/", FileRequest(M, "report.pdf", "docs/")),
    ("Copy notes.md to notes-backup.md", FileRequest(C, "notes.md", "notes-backup.md")),
    ("make a copy of notes.md called notes2.md", FileRequest(C, "notes.md", "notes2.md")),
    ("duplicate config.yaml as config.bak.yaml", FileRequest(C, "config.yaml", "config.bak.yaml")),
    ("back up todo.txt to backups", FileRequest(C, "todo.txt", "backups/")),
    ("Append 'buy milk' to todo.txt", FileRequest(A, "todo.txt", text="buy milk")),
    ('add the line "call mom" to the end of todo.txt', FileRequest(A, "todo.txt", text="call mom")),
    ("write 'done' at the end of log.txt", FileRequest(A, "log.txt", text="done")),
    ("append to notes.md: 'meeting at 3'", FileRequest(A, "notes.md", text="meeting at 3")),
    ("extend todo.txt with 'walk the dog'", FileRequest(A, "todo.txt", text="walk the dog")),
    # three of the train half of issue 44's everyday set the first rules missed
    ("Erase draft.txt, I don't need it anymore", FileRequest(D, "draft.txt")),
    ("Call recipe.txt food.txt from now on", FileRequest(R, "recipe.txt", "food.txt")),
    ("Put old.log inside docs", FileRequest(M, "old.log", "docs/")),
]

HELD_OUT: list[tuple[str, FileRequest]] = [
    ("kindly erase `build/output.bin`", FileRequest(D, "build/output.bin")),
    ("i need you to trash tmp/cache.json", FileRequest(D, "tmp/cache.json")),
    ("the file scratch.md is no longer needed, delete it", FileRequest(D, "scratch.md")),
    ('can you please get rid of "old notes.txt"', FileRequest(D, "old notes.txt")),
    ("bin report-2023.pdf", FileRequest(D, "report-2023.pdf")),
    ("please nuke the dist directory", FileRequest(D, "dist")),
    ("ok so draft.md — throw it out", FileRequest(D, "draft.md")),
    ("could you rename README.txt as README.md?", FileRequest(R, "README.txt", "README.md")),
    ("change the file name of a.md to b.md", FileRequest(R, "a.md", "b.md")),
    (
        "I'd like draft-v2.docx renamed to draft-final.docx",
        FileRequest(R, "draft-v2.docx", "draft-final.docx"),
    ),
    ("rename `notes.md` to `journal.md` please", FileRequest(R, "notes.md", "journal.md")),
    ("retitle chapter1.md to intro.md", FileRequest(R, "chapter1.md", "intro.md")),
    ("mv old.txt new.txt", FileRequest(M, "old.txt", "new.txt")),
    ("shift photo.jpg into pictures/", FileRequest(M, "photo.jpg", "pictures/")),
    (
        "please move budget.xlsx over to the finance folder",
        FileRequest(M, "budget.xlsx", "finance/"),
    ),
    ("drag logo.png to assets", FileRequest(M, "logo.png", "assets/")),
    (
        "could you duplicate main.css as main.backup.css",
        FileRequest(C, "main.css", "main.backup.css"),
    ),
    (
        "clone settings.json to settings.local.json",
        FileRequest(C, "settings.json", "settings.local.json"),
    ),
    (
        "make a backup of db.sqlite called db.sqlite.bak",
        FileRequest(C, "db.sqlite", "db.sqlite.bak"),
    ),
    ("cp index.html public/", FileRequest(C, "index.html", "public/")),
    (
        'could you append "- buy bread" to shopping.md',
        FileRequest(A, "shopping.md", text="- buy bread"),
    ),
    (
        "stick 'TODO: tests' at the bottom of README.md",
        FileRequest(A, "README.md", text="TODO: tests"),
    ),
    (
        "add another line with 'see you soon' to letter.txt",
        FileRequest(A, "letter.txt", text="see you soon"),
    ),
    (
        'put "end of report" at the end of report.txt',
        FileRequest(A, "report.txt", text="end of report"),
    ),
    ('add to journal.txt: "slept well"', FileRequest(A, "journal.txt", text="slept well")),
    (
        "tack on \u201cthanks!\u201d to the end of email.txt",
        FileRequest(A, "email.txt", text="thanks!"),
    ),
]

# Not one certain operation: the model (or another rule) decides.
NOT_AN_OPERATION = [
    "write 'hi' to notes.md",
    "put 'hello' in notes.md",
    "delete it",
    "Delete old.log and new.log",
    "delete the whole folder",
    "move notes.txt to the top",
    "how do I rename a.txt to b.txt?",
    "Should I delete old.log?",
    "Delete old.log and then list the files",
    "read notes.md, then delete it",
    "copy the text of a.md",
    "what is in old.log?",
    "Delete old.log, then list the files",
    "Delete old.log, and notes.md too",
]


@pytest.mark.parametrize(("request_text", "expected"), WRITTEN + HELD_OUT)
def test_each_phrasing_reads_as_its_operation(request_text: str, expected: FileRequest) -> None:
    assert read_file_request(request_text) == expected


@pytest.mark.parametrize("request_text", NOT_AN_OPERATION)
def test_anything_less_certain_is_no_operation(request_text: str) -> None:
    assert read_file_request(request_text) is None


@pytest.mark.parametrize(("request_text", "expected"), WRITTEN[::3] + HELD_OUT[::3])
def test_the_router_makes_the_operations_call(request_text: str, expected: FileRequest) -> None:
    """Through the router, the coder tools on offer too: a code file's name is no code work."""
    route = decide_route(request_text, RouteFacts(tools=TOOLS, shortcuts=True))
    assert route.shortcut is not None and not route.coder
    assert (route.shortcut.tool, route.shortcut.args) == expected.call()
    assert route.shortcut.rule == f"{expected.operation} a file"


def test_delete_app_py_is_a_file_operation_not_code_work() -> None:
    route = decide_route("Delete app.py", RouteFacts(tools=TOOLS, shortcuts=True))
    assert route.shortcut is not None and route.shortcut.args == {"path": "app.py"}
    assert route.coder is False and "file tool" in route.reason("coder")


def test_no_shortcut_when_the_tool_is_not_offered() -> None:
    assert find_shortcut("Delete old.log", TOOLS - {"file_delete"}) is None


def test_the_calls_have_each_tools_arguments() -> None:
    assert FileRequest(D, "a").call() == ("file_delete", {"path": "a"})
    assert FileRequest(R, "a", "b").call() == ("file_move", {"source": "a", "destination": "b"})
    assert FileRequest(C, "a", "b").call() == ("file_copy", {"source": "a", "destination": "b"})
    assert FileRequest(A, "a", text="t").call() == ("file_append", {"path": "a", "text": "t"})


def test_a_loose_request_still_names_its_operations_and_files() -> None:
    found = mentioned_operation("hey, old.log and tmp.log are junk now; delete them both")
    assert found.exact is None
    assert found.operations == {"delete"}
    assert found.names_path("old.log") and found.names_path("./tmp.log")
    assert not found.names_path("notes.md")


OVERWRITE = Verdict("ask", "overwrite existing file x", overwrites=True)


def _replacing(path: str) -> Verdict:
    return Verdict("ask", f"overwrite existing file {path}", overwrites=True, replaced=(path,))


DESTRUCTIVE = Verdict("ask", "delete", command_class="destructive")
MISMATCHED: list[tuple[str, str, dict[str, Any], Verdict, str]] = [
    # the two calls of issue 44, as the bundled model made them
    (
        "Delete old.log",
        "file_write",
        {"path": "old.log", "content": ""},
        _replacing("old.log"),
        "Does not match the request: this replaces everything in old.log, but the request "
        "asked to delete old.log.",
    ),
    (
        "Rename draft.txt to final.txt",
        "file_write",
        {"path": "draft.txt", "content": "final.txt"},
        _replacing("draft.txt"),
        "Does not match the request: this replaces everything in draft.txt, but the request "
        "asked to rename draft.txt to final.txt.",
    ),
    (
        "Append 'milk' to todo.txt",
        "file_write",
        {"path": "todo.txt", "content": "milk"},
        _replacing("todo.txt"),
        "Does not match the request: this replaces everything in todo.txt, but the request "
        "asked to add to the end of todo.txt, keeping what it holds.",
    ),
    (
        "Rename draft.txt to final.txt",
        "file_delete",
        {"path": "draft.txt"},
        DESTRUCTIVE,
        "Does not match the request: this deletes draft.txt, but the request asked to rename "
        "draft.txt to final.txt.",
    ),
    (
        "Make a copy of a.txt called b.txt",
        "file_move",
        {"source": "a.txt", "destination": "b.txt"},
        Verdict("allow", "moves"),
        "Does not match the request: this moves a.txt away, but the request asked to copy "
        "a.txt to b.txt, keeping it.",
    ),
    (
        "Delete old.log",
        "file_delete",
        {"path": "notes.md"},
        DESTRUCTIVE,
        "Does not match the request: this deletes notes.md, a file the request did not name.",
    ),
    (
        "Create hello.txt saying 'hi'",
        "file_write",
        {"path": "notes.md", "content": "hi"},
        _replacing("notes.md"),
        "Does not match the request: this replaces everything in notes.md, a file the request "
        "did not name.",
    ),
    (
        "Move a.txt to docs",
        "shell_exec",
        {"command": "cp a.txt docs/b.txt"},
        Verdict("ask", "overwrites", replaced=("docs/b.txt",)),
        "Does not match the request: this replaces everything in docs/b.txt, but the request "
        "asked to move a.txt to docs/.",
    ),
]


@pytest.mark.parametrize(
    ("request_text", "name", "args", "verdict", "warning"),
    MISMATCHED,
    ids=[f"{m[1]}-for-{m[0]}" for m in MISMATCHED],
)
def test_a_call_that_destroys_what_was_not_asked_says_so_first(
    request_text: str, name: str, args: dict[str, Any], verdict: Verdict, warning: str
) -> None:
    assert card_warning(request_text, name, args, verdict) == warning


MATCHED: list[tuple[str, str, dict[str, Any], Verdict]] = [
    ("Delete old.log", "file_delete", {"path": "old.log"}, DESTRUCTIVE),
    (
        "Rename draft.txt to final.txt",
        "file_move",
        {"source": "draft.txt", "destination": "final.txt"},
        Verdict("allow", "moves"),
    ),
    (
        "Rename draft.txt to final.txt",
        "file_move",
        {"source": "draft.txt", "destination": "final.txt"},
        _replacing("final.txt"),
    ),
    (
        "copy a.txt over b.txt",
        "file_copy",
        {"source": "a.txt", "destination": "b.txt"},
        _replacing("b.txt"),
    ),
    (
        "Write 'hi' to notes.md",
        "file_write",
        {"path": "notes.md", "content": "hi"},
        _replacing("notes.md"),
    ),
    (
        "Fix the typo in the readme",
        "file_write",
        {"path": "README.md", "content": "x"},
        _replacing("README.md"),
    ),
    (
        "Append 'milk' to todo.txt",
        "file_append",
        {"path": "todo.txt", "text": "milk"},
        Verdict("allow", "appends"),
    ),
    ("please run rm -rf build", "shell_exec", {"command": "rm -rf build"}, DESTRUCTIVE),
    # Requests to change content whose words also name an operation in passing.
    (
        "Fix the bug in calc.py: add(1, 2) gives -1",
        "file_write",
        {"path": "calc.py", "content": "x"},
        _replacing("calc.py"),
    ),
    (
        "Refactor utils.py and move the parser helper to the top",
        "file_write",
        {"path": "utils.py", "content": "x"},
        _replacing("utils.py"),
    ),
]


@pytest.mark.parametrize(("request_text", "name", "args", "verdict"), MATCHED)
def test_the_call_asked_for_gets_no_warning(
    request_text: str, name: str, args: dict[str, Any], verdict: Verdict
) -> None:
    assert card_warning(request_text, name, args, verdict) == ""


def test_the_earlier_rm_warning_still_stands() -> None:
    rm = Verdict("ask", "rm deletes draft.txt", command_class="destructive")
    warning = card_warning("Make draft.txt the final one", "shell_exec", {"command": "rm x"}, rm)
    assert warning.startswith("Does not match the request: this command destroys data")


def test_a_named_operation_the_rules_cannot_read_is_not_left_to_the_selector() -> None:
    """The selector's exemplars hold no file operation: it would pick `file_write`."""
    facts = RouteFacts(tools=TOOLS, shortcuts=True)
    for task, selects in [
        ("Please make old.log go away, delete it and its twin", False),
        ("Give me an overview of my notes", True),
        ("What is the address of the pond in my notes", True),
    ]:
        route = decide_route(task, facts)
        assert route.shortcut is None
        assert wants_selection(route, facts, task) is selects, task
