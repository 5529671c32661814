"""The router's rules, as a table, and how a sys_util answer fills what they leave open."""

from __future__ import annotations

import json

import pytest

from ducklm.turn.router import (
    CODER_TOOLS,
    ROUTE_CHOICES,
    Route,
    RouteAnswer,
    RouteFacts,
    decide_route,
    merge_answer,
    route_question,
)

TOOLS = frozenset({"file_read", "file_write", "list_dir", "shell_exec", *CODER_TOOLS})
FACTS = RouteFacts(tools=TOOLS)
LONG = (
    "I am preparing a report about renewable energy for my team and I need a thorough "
    "overview of the solar panel market in Europe, with prices, trends, the main "
    "manufacturers, the regulations and subsidies in each country and the outlook for "
    "the next ten years, with sources wherever you can find them, written so that people "
    "without a technical background can follow it"
)
TRACEBACK = 'Traceback (most recent call last):\n  File "a.py", line 3\nZeroDivisionError: x'

# What each kind of task turns on (the decisions not named are off).
NOTHING = ""
ANSWER = "recall critique"
CODE = "recall coder critique"
PLAN = "recall plan critique"
PLAN_CODE = "recall plan coder critique"

CASES = [
    pytest.param("hi", NOTHING, id="greeting"),
    pytest.param("Hello there!", NOTHING, id="greeting-phrase"),
    pytest.param("hi, how are you?", NOTHING, id="greeting-question"),
    pytest.param("thanks a lot!", NOTHING, id="thanks"),
    pytest.param("ok", NOTHING, id="ok"),
    pytest.param("   ", NOTHING, id="empty"),
    pytest.param("What is a DAG?", ANSWER, id="question"),
    pytest.param("why is the sky blue", ANSWER, id="question-no-mark"),
    pytest.param("what does main.py do?", ANSWER, id="question-about-file"),
    pytest.param("How do I implement a linked list in Python?", ANSWER, id="how-to-code"),
    pytest.param("Explain the parser in app.py", ANSWER, id="explain-code"),
    pytest.param("Summarize the README", ANSWER, id="one-action"),
    pytest.param("list the files in src", ANSWER, id="one-action-dir"),
    pytest.param("read notes.md and summarize it", ANSWER, id="two-short-actions"),
    pytest.param("Refactor utils.py to use dataclasses", CODE, id="refactor"),
    pytest.param("fix the bug in parser.py", CODE, id="fix-bug"),
    pytest.param("Please fix the failing tests", CODE, id="fix-tests"),
    pytest.param("write a function that reverses a string", CODE, id="write-function"),
    pytest.param("implement the retry logic in client.ts", CODE, id="implement"),
    pytest.param("Hello, can you refactor db.py?", CODE, id="polite-request"),
    pytest.param("Update app.py to log every request", CODE, id="change-code-file"),
    pytest.param("fix this:\n```python\ndef f(x):\n    return x / 0\n```", CODE, id="fix-pasted"),
    pytest.param("First read notes.md, then summarize it", PLAN, id="first-then"),
    pytest.param("read notes.md and then summarize it", PLAN, id="and-then"),
    pytest.param("Download the csv, then plot the prices", PLAN, id="comma-then"),
    pytest.param(
        "1. list the files 2. count the lines 3. write the total", PLAN, id="numbered-inline"
    ),
    pytest.param("Do this:\n1) clone the repo\n2) run the tests", PLAN, id="numbered-lines"),
    pytest.param("Step 1: download the csv. Step 2: plot it.", PLAN, id="step-words"),
    pytest.param("Run the tests. Finally, commit the changes.", PLAN, id="finally"),
    pytest.param("Back up the database; after that, upgrade postgres", PLAN, id="after-that"),
    pytest.param(
        "read config.yaml, update the port and restart the server", PLAN, id="three-actions"
    ),
    pytest.param(
        "Please:\n- fetch the logs\n- count the errors\n- send me a summary", PLAN, id="bullets"
    ),
    pytest.param(
        "Can you first run the tests and then fix what fails?", PLAN, id="sequenced-question"
    ),
    pytest.param(
        "write a function parse_date in dates.py and then add tests for it",
        PLAN_CODE,
        id="code-and-steps",
    ),
    pytest.param("if x is 0 then what happens?", ANSWER, id="if-then-question"),
    pytest.param("show the first and the second line of a.txt", ANSWER, id="first-as-adjective"),
    pytest.param("and then what?", ANSWER, id="and-then-what"),
    pytest.param("is Python 3.11 faster than 3.10?", ANSWER, id="version-number"),
    pytest.param("update the port in config.yaml", ANSWER, id="non-code-file"),
]
UNDECIDED = [
    pytest.param(
        "the parser in app.py crashes on empty input", ANSWER, ("coder",), id="bug-report"
    ),
    pytest.param(
        TRACEBACK,
        ANSWER,
        ("coder",),
        id="traceback",
    ),
    pytest.param(LONG, ANSWER, ("plan",), id="long-request"),
]


def on(route: Route) -> str:
    """The decisions `route` turns on, in `ROUTE_CHOICES` order, as in the tables."""
    return " ".join(d for d in ROUTE_CHOICES if getattr(route, d))


@pytest.mark.parametrize(("task", "expected"), CASES)
def test_route_table(task: str, expected: str) -> None:
    route = decide_route(task, FACTS)
    assert on(route) == expected, route.reasons
    assert route.undecided == ()
    assert len(route.reasons) == len(ROUTE_CHOICES)
    assert all(reason.endswith(".") for reason in route.reasons)


@pytest.mark.parametrize(("task", "expected", "undecided"), UNDECIDED)
def test_rules_that_cannot_decide_say_so(
    task: str, expected: str, undecided: tuple[str, ...]
) -> None:
    route = decide_route(task, FACTS)
    assert on(route) == expected, route.reasons  # the conservative value until an answer comes
    assert route.undecided == undecided
    assert "cannot tell" in route.reason(undecided[0])


def test_reasons_quote_the_evidence() -> None:
    route = decide_route("First read notes.md, then refactor app.py", FACTS)
    assert '"first ... then"' in route.reason("plan")
    assert '"refactor"' in route.reason("coder")


def test_switched_off_and_empty() -> None:
    facts = RouteFacts(tools=TOOLS, recall_enabled=False, critic_enabled=False)
    route = decide_route("Refactor utils.py", facts)
    assert (route.recall, route.critique, route.coder) == (False, False, True)
    assert "switched off" in route.reason("recall")
    assert "switched off" in route.reason("critique")
    empty = decide_route("Refactor utils.py", RouteFacts(tools=TOOLS, memory_has_records=False))
    assert not empty.recall
    assert "no records" in empty.reason("recall")


def test_no_coder_tool_means_no_coder() -> None:
    route = decide_route("Refactor utils.py", RouteFacts(tools=frozenset({"file_write"})))
    assert not route.coder
    assert route.undecided == ()
    assert "No coder tool" in route.reason("coder")
    unsure = decide_route("the parser in app.py crashes", RouteFacts(tools=frozenset()))
    assert unsure.undecided == ()


def test_running_plan_continues() -> None:
    route = decide_route("1. read a.txt 2. write b.txt", RouteFacts(tools=TOOLS, plan_running=True))
    assert not route.plan
    assert not route.recall
    assert "already running" in route.reason("plan")


def test_event_fields_are_json() -> None:
    route = decide_route("the parser in app.py crashes on empty input", FACTS)
    fields = json.loads(json.dumps(route.event_fields()))
    assert fields["undecided"] == ["coder"]
    assert set(fields) == {*ROUTE_CHOICES, "reasons", "undecided", "shortcut", "selected"}


def test_question_for_sys_util_holds_the_task() -> None:
    question = route_question("  tidy up the repo  ")
    assert "tidy up the repo" in question
    assert "multi_step" in question
    assert len(route_question("x" * 10_000)) < 2500


UNDECIDED_BOTH = "the parser in app.py crashes on empty input. " + LONG


def test_merge_fills_only_undecided() -> None:
    route = decide_route(UNDECIDED_BOTH, FACTS)
    assert route.undecided == ("plan", "coder")
    merged = merge_answer(route, RouteAnswer(multi_step=True, code=True, reason="read, fix, test"))
    assert (merged.plan, merged.coder, merged.undecided) == (True, True, ())
    assert merged.reason("plan") == "Asked the sys_util role: several steps (read, fix, test)."
    assert merged.reason("coder") == "Asked the sys_util role: code work (read, fix, test)."
    assert merged.reason("recall") == route.reason("recall")


def test_merge_keeps_rule_decisions() -> None:
    route = decide_route("the parser in app.py crashes on empty input", FACTS)
    merged = merge_answer(route, {"multi_step": True, "code": False, "reason": "x"})
    assert not merged.plan  # decided by a rule; the model's opinion does not override it
    assert not merged.coder
    assert "not code work" in merged.reason("coder")
    decided = decide_route("refactor a.py", FACTS)
    assert merge_answer(decided, {"multi_step": True, "code": False}) is decided


@pytest.mark.parametrize(
    "answer",
    [None, "yes", [], {}, {"multi_step": "maybe", "code": True}, {"code": True}, 42],
    ids=["none", "text", "list", "empty", "bad-bool", "missing-field", "number"],
)
def test_missing_or_invalid_answer_keeps_the_conservative_choice(answer: object) -> None:
    route = decide_route(UNDECIDED_BOTH, FACTS)
    merged = merge_answer(route, answer)
    assert (merged.plan, merged.coder, merged.undecided) == (False, False, ())
    assert merged.reason("plan").endswith("gave no usable answer, so: no plan.")
    assert merged.reason("coder").endswith("gave no usable answer, so: no coder.")


def test_answer_is_lenient_where_harmless() -> None:
    answer = RouteAnswer.model_validate(
        {"multi_step": "true", "code": 0, "reason": "  many\n words " * 40, "extra": 1}
    )
    assert answer.multi_step is True
    assert answer.code is False
    assert len(answer.reason) <= 160
    assert "\n" not in answer.reason
