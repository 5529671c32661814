"""The repetition guard: loops are cut where they began, legitimate repetition is not."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from ducklm.models.repetition import RepetitionGuard

REPO = Path(__file__).resolve().parents[2]
PARAGRAPH = (
    "Projects are amazing! They help you learn new skills, meet new people and build "
    "things that matter to you and to the others around you every single day. "
)
OPENING = "Here is what notes.md holds.\n\n"


def tokens(text: str) -> list[str]:
    """`text` as a server streams it: one piece per word with its leading space."""
    return re.findall(r"\s*\S+|\s+$", text)


def stream(
    text: str, pieces: list[str] | None = None, sources: tuple[str, ...] = ()
) -> RepetitionGuard:
    guard = RepetitionGuard(sources)
    for piece in pieces if pieces is not None else tokens(text):
        if guard.feed(piece):
            break
    return guard


def test_a_looping_paragraph_is_cut_where_the_repeat_began() -> None:
    guard = stream(OPENING + PARAGRAPH * 12)
    assert guard.cut_at is not None
    assert guard.text == (OPENING + PARAGRAPH).strip()
    # Cut within about two copies, not at the token limit.
    assert guard.fed < len(OPENING) + 3 * len(PARAGRAPH)


def test_a_loop_with_a_word_changed_in_each_copy_is_cut() -> None:
    words = PARAGRAPH.split()
    copies = []
    for i in range(12):
        changed = list(words)
        changed[(i * 7) % len(words)] = f"word{i}"
        copies.append(" ".join(changed) + " ")
    guard = stream(OPENING + "".join(copies))
    assert guard.cut_at is not None
    assert guard.text.startswith(OPENING.strip())
    assert len(guard.text) < len(OPENING) + 2 * len(PARAGRAPH)


def test_the_cut_does_not_depend_on_how_the_stream_is_split() -> None:
    text = OPENING + PARAGRAPH * 8
    by_word = stream(text)
    by_char = stream(text, pieces=list(text))
    by_chunk = stream(text, pieces=[text[i : i + 7] for i in range(0, len(text), 7)])
    assert by_word.text == by_char.text == by_chunk.text == (OPENING + PARAGRAPH).strip()


LIST = "".join(
    f"{i}. The function `parse_{name}` takes a string and returns a list of strings.\n"
    for i, name in enumerate(
        ["date", "time", "name", "path", "size", "mode", "user", "host", "port", "line"] * 3
    )
)
TABLE = "| file | lines | words |\n| --- | --- | --- |\n" + "".join(
    f"| notes-{i}.md | {i * 3} | {i * 17} |\n" for i in range(40)
)
CODE = """```python
from dataclasses import dataclass


@dataclass
class Duck:
    name: str
    age: int
    colour: str
    pond: str

    def get_name(self) -> str:
        return self.name

    def get_age(self) -> int:
        return self.age

    def get_colour(self) -> str:
        return self.colour

    def get_pond(self) -> str:
        return self.pond


def test_duck() -> None:
    duck = Duck("Daisy", 3, "white", "north")
    assert duck.get_name() == "Daisy"
    assert duck.get_age() == 3
    assert duck.get_colour() == "white"
    assert duck.get_pond() == "north"
    assert duck.name == "Daisy"
    assert duck.age == 3
    assert duck.colour == "white"
    assert duck.pond == "north"
```
""" + "".join(f'    <div class="row"><span>{name}</span></div>\n' for name in "abcdefghijklmnop")


@pytest.mark.parametrize("text", [LIST, TABLE, CODE], ids=["list", "table", "code"])
def test_similar_lines_are_not_cut(text: str) -> None:
    guard = stream(text)
    assert guard.cut_at is None
    assert guard.text == text


def test_quoting_a_source_that_repeats_itself_is_not_cut() -> None:
    log = "ERROR pond sensor 3 did not answer within five seconds, retrying now\n" * 12
    answer = "app.log holds twelve lines, all the same:\n\n" + log
    assert stream(answer).cut_at is not None, "without the source it is a loop"
    assert stream(answer, sources=("[tool file_read result]\n" + log,)).cut_at is None
    # Writing it more often than the source has it is a loop again.
    assert stream(answer + log, sources=(log,)).cut_at is not None


def test_the_repositorys_own_text_and_code_are_not_cut() -> None:
    # Real prose, lists, tables and code, as an answer might quote or write them.
    listed = subprocess.run(
        ["git", "ls-files", "*.py", "*.md", "*.js", "*.yaml"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    files = [REPO / name for name in listed if (REPO / name).is_file()]
    assert len(files) > 100
    cut = [f.name for f in files if stream(f.read_text(errors="replace")).cut_at is not None]
    assert cut == []
