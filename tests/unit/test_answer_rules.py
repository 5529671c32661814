"""Rules that answer by themselves (issue 44): calculations, measures, "remember", "who are you".

The phrasings here are not the ones the rules were written from: each test holds ones
a person might say next, and ones that look alike but ask something else.
"""

from __future__ import annotations

import pytest

from ducklm.turn.answer_rules import ABOUT_ME, CALCULATION, REMEMBER, answer_rule
from ducklm.turn.arithmetic import evaluate, find_calculation
from ducklm.turn.explicit_memory import requested_memory
from ducklm.turn.measure_rules import statement
from ducklm.turn.self_questions import self_topics
from ducklm.turn.shortcuts import Shortcut, find_shortcut
from ducklm.turn.told_before import told_answer

TOOLS = frozenset({"file_read", "file_write", "list_dir", "search_files", "shell_exec"})
NOTES = "Ducks nap at dawn.\nGeese honk loudly at noon.\nSwans glide.\n"


@pytest.mark.parametrize(
    ("task", "value"),
    [
        ("what's 19 * 21", "399"),
        ("Could you work out 144 divided by 12?", "12"),
        ("how much is 3.5 plus 1.25", "4.75"),
        ("Compute 2^16.", "65536"),
        ("what is 20 percent of 45?", "9"),
        ("calculate the square root of 169", "13"),
        ("(8 - 3) x 4 =", "20"),
        ("please evaluate 7 mod 3", "1"),
        ("What's 1,000 minus 1?", "999"),
    ],
)
def test_a_calculation_is_computed(task: str, value: str) -> None:
    calc = find_calculation(task)
    assert calc is not None, task
    assert calc.answer().endswith(f"= {value}")
    assert answer_rule(task) == CALCULATION


@pytest.mark.parametrize(
    "task",
    [
        "What is 5 minutes in seconds?",
        "How many legs does a spider have?",
        "Is 2024 a leap year?",
        "What is the population of Lisbon?",
        "what is 10 ** 10 ** 10",  # bounded: refused, not computed for minutes
        "__import__('os').system('id')",
        "what is 1/0",
        "2024",
    ],
)
def test_anything_else_is_no_calculation(task: str) -> None:
    assert find_calculation(task) is None


def test_the_evaluator_takes_arithmetic_only() -> None:
    import ast

    with pytest.raises(ValueError, match="not arithmetic"):
        evaluate(ast.parse("abs(-3)", mode="eval").body)
    with pytest.raises(ValueError, match="not arithmetic"):
        evaluate(ast.parse("x + 1", mode="eval").body)


@pytest.mark.parametrize(
    ("task", "tool", "said"),
    [
        ("Please show the 2nd line of notes.md", "file_read", "Line 2 of `notes.md`: Geese honk"),
        ("what's the final line in notes.md?", "file_read", "The last line of `notes.md`: Swans"),
        ("print the first two lines of notes.md", "file_read", "Ducks nap at dawn.\nGeese"),
        ("how many words does notes.md contain?", "file_read", "`notes.md` has 11 words."),
        ("the number of lines in notes.md", "file_read", "`notes.md` has 3 lines."),
        ("count the characters in notes.md", "file_read", f"has {len(NOTES)} characters"),
        ("Does notes.md mention geese?", "file_read", "Yes: `notes.md` mentions 'geese' on line 2"),
        ("does notes.md say 'pelican'", "file_read", "No: `notes.md` does not mention 'pelican'"),
    ],
)
def test_a_part_or_measure_of_a_file_is_stated(task: str, tool: str, said: str) -> None:
    shortcut = find_shortcut(task, TOOLS)
    assert shortcut is not None and shortcut.tool == tool, task
    assert shortcut.args == {"path": "notes.md"}
    answer = statement(shortcut, task, NOTES)
    assert answer is not None and said in answer


def test_a_measure_from_a_command_is_stated_and_a_failure_is_not() -> None:
    size = find_shortcut("How large is notes.md in bytes?", TOOLS)
    assert size == Shortcut("shell_exec", {"command": "wc -c -- notes.md"}, "size of a file")
    said = statement(size, "How large is notes.md in bytes?", "exit code 0\n57 notes.md\n")
    assert said == "`notes.md` is 57 bytes."
    assert statement(size, "How large is notes.md in bytes?", "exit code 1\nwc: no file") is None
    version = find_shortcut("what python version does this machine have", TOOLS)
    assert version is not None and version.args == {"command": "python3 --version"}
    said = statement(
        version, "what python version does this machine have", "exit code 0\nPython 3.12.1\n"
    )
    assert said is not None and said.startswith("Python 3.12.1 is installed")


def test_a_file_that_is_there_or_not() -> None:
    task = "is there a file named poem.txt in the workspace?"
    shortcut = find_shortcut(task, TOOLS)
    assert shortcut is not None and shortcut.tool == "list_dir"
    assert (
        statement(shortcut, task, "docs/\npoem.txt  (12 bytes)")
        == "Yes: `poem.txt` exists (12 bytes)."
    )
    assert (
        statement(shortcut, task, "docs/\npoems.txt  (12 bytes)") == "No: there is no `poem.txt`."
    )


def test_a_cut_text_gives_no_count() -> None:
    task = "how many words are in big.txt"
    shortcut = find_shortcut(task, TOOLS)
    assert shortcut is not None
    assert statement(shortcut, task, "word " * 10 + "\n[... cut: longer than 100 chars]") is None


@pytest.mark.parametrize(
    ("task", "fact"),
    [
        (
            "Remember this: the spare key is under the blue pot.",
            "The spare key is under the blue pot.",
        ),
        ("ok, make a note that Lena's birthday is 3 May", "Lena's birthday is 3 May."),
        ("We moved to Ghent last spring - don't forget it!", "We moved to Ghent last spring."),
        ("I'd rather get answers in bullet points", "I'd rather get answers in bullet points."),
        ("from now on, use metric units", "From now on, use metric units."),
        ("For future reference: my bike is a green Gazelle", "My bike is a green Gazelle."),
        ("always answer in Portuguese", "Always answer in Portuguese."),
    ],
)
def test_an_explicit_request_to_remember_gives_its_fact(task: str, fact: str) -> None:
    assert requested_memory(task) == fact
    assert answer_rule(task) == REMEMBER


@pytest.mark.parametrize(
    "task",
    [
        "Do you remember where I parked?",
        "remember when we talked about Ghent?",
        "Remember what I told you about Lena",
        "I remember my first bike",
        "Note the time and write it to log.txt?",
        "What should I keep in mind when hiking?",
    ],
)
def test_a_question_or_a_mention_keeps_nothing(task: str) -> None:
    assert requested_memory(task) is None


@pytest.mark.parametrize(
    ("task", "topics"),
    [
        ("hey there. what sort of things are you able to help with?", ("abilities",)),
        ("Which LLM is behind you?", ("model",)),
        ("what language model powers this?", ("model",)),
        ("In which directory are you working right now?", ("workspace",)),
        ("What have you stored about me?", ("memory",)),
        ("who am I talking to? what's your name?", ("identity",)),
        ("What can't you do?", ("abilities",)),
    ],
)
def test_a_question_about_ducklm_names_its_topics(task: str, topics: tuple[str, ...]) -> None:
    assert self_topics(task) == topics
    assert answer_rule(task) == ABOUT_ME


@pytest.mark.parametrize(
    "task",
    [
        "Can you tell me what is in todo.md?",
        "Could you help me fix app.py?",
        "Do you know the capital of Peru?",
        "What model of car did I mention?",
        "Can you remember my sister's name?",
        "Where are the log files?",
        "How do you make pancakes?",
    ],
)
def test_a_question_about_something_else_is_not_about_ducklm(task: str) -> None:
    assert self_topics(task) == ()


KEPT = [
    {"text": "Our landlord is called Mr. Ortiz.", "kind": "fact"},
    {"text": "I usually cycle to work on Tuesdays.", "kind": "fact"},
    {"text": "My flight to Oslo is on the 9th, please remember it.", "kind": "fact"},
    {"text": "I want to install python on my laptop", "kind": "episode", "speaker": "user"},
    {"text": "Your flight is on the 9th.", "kind": "episode", "speaker": "assistant"},
    {"text": "What is our wifi password?", "kind": "episode", "speaker": "user"},
]


@pytest.mark.parametrize(
    ("task", "said"),
    [
        ("Who is our landlord?", "Our landlord is called Mr. Ortiz."),
        ("What do I do on Tuesdays?", "I usually cycle to work on Tuesdays."),
        ("When is my flight to Oslo?", "My flight to Oslo is on the 9th, please remember it."),
    ],
)
def test_a_question_about_what_was_told_gets_the_persons_words(task: str, said: str) -> None:
    assert told_answer(task, KEPT) == f"You told me: {said}"


@pytest.mark.parametrize(
    "task",
    [
        "Who is our plumber?",
        "When is my flight to Rome?",
        "Tell me a joke",
        "Where is Oslo?",
        "what is our wifi password?",  # asked before, never told
        "How do I install python on my laptop?",  # said in passing, not kept: no answer
    ],
)
def test_a_question_no_memory_answers_is_left_to_the_model(task: str) -> None:
    assert told_answer(task, KEPT) is None
