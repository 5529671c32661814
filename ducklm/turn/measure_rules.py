"""Rule shortcuts for a part or a measure of a result, and the sentence that states it.

"Print the first line of notes.md" got the whole file; a word count, a size in bytes
and the Python version came back as the tool's output restated, not as the number
asked for. These rules read such a request whole (as `ducklm.turn.shortcuts` does), make
the one call that finds the answer, and `statement` computes the part or the measure
from the call's result: the answer states it in one sentence, no model between.

- a part of a file: the first, last or n-th line, the first or last n lines;
- a measure of a file: its words, lines or characters (counted here from its text), its
  size in bytes (`wc -c`);
- a yes or no: whether a file mentions a text, whether a file exists;
- the machine: the date, the time, python3's version, the operating system.

Everything here is pure: no I/O, no model, no clock.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ducklm.turn.shortcuts import END, FILE, LEAD, QUOTED, THE, Rule, Shortcut

ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "1st": 1, "2nd": 2, "3rd": 3, "one": 1, "two": 2,
    "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip
NUMBER = rf"(?:\d{{1,4}}|{'|'.join(ORDINALS)})"
SHOW = (
    r"(?:(?:show|print|display|read|give|tell|get|output|cat)(?:\s+me)?|what(?:'s|\s+is|\s+are)"
    r"|i\s+(?:want|need)(?:\s+to\s+see)?)\s+"
)
UNITS = r"words|lines|characters|chars|letters"
UNCOUNTED = r"words|characters|chars|letters"
"""...but lines: "how many lines" and "count the lines" are `ducklm.turn.shortcuts`' (`wc -l`)."""
OF_FILE = rf"\s+(?:of|in|from)\s+{THE}(?:file\s+)?{FILE}"
CUT = "[... cut:"
"""How `file_read` marks a text it did not read to the end: no count from there."""
SHELL_OK = re.compile(r"\Aexit code 0\n?")

Say = Callable[[re.Match[str], str], str | None]


@dataclass(frozen=True)
class MeasureRule(Rule):
    """A shortcut rule whose answer is a part or a measure of the call's result."""

    say: Say = lambda match, result: None
    """The sentence stating the part or the measure, from the request's match and the result."""


def _measure(name: str, tool: str, body: str, args: Callable[..., Any], say: Say) -> MeasureRule:
    return MeasureRule(name, tool, re.compile(LEAD + body + END, re.I), args, say)


def _number(word: str | None, default: int = 1) -> int:
    if not word:
        return default
    return int(word) if word.isdigit() else ORDINALS[word.lower()]


def _text(result: str) -> str | None:
    """A file's whole text from `file_read`'s result; `None` when it was cut."""
    return None if CUT in result[-80:] else result


def _lines_said(match: re.Match[str], result: str) -> str | None:
    text, path = _text(result), match["path"]
    if text is None:
        return None
    lines = text.splitlines()
    which, count = (match["which"] or "first").lower(), _number(match["count"], 0)
    if match["nth"]:
        n = _number(match["nth"])
        part, what = lines[n - 1 : n], f"Line {n}"
    elif which in ("last", "final"):
        part, what = (
            lines[-max(count, 1) :],
            f"The last {count} lines" if count else "The last line",
        )
    else:
        n = _number(which) if which != "top" else 1
        if count:
            part, what = lines[:count], f"The first {count} lines"
        else:
            part, what = lines[n - 1 : n], "The first line" if n == 1 else f"Line {n}"
    if not part:
        return f"`{path}` has {len(lines)} lines: there is no {what.lower().removeprefix('the ')}."
    if len(part) == 1:
        return f"{what} of `{path}`: {part[0]}"
    return f"{what} of `{path}`:\n\n" + "\n".join(part)


def _count_said(match: re.Match[str], result: str) -> str | None:
    text, path = _text(result), match["path"]
    if text is None:
        return None
    unit = next(u for k in ("u1", "u2", "u3", "u4") if (u := match.group(k))).lower()
    unit = unit.rstrip("s")
    if unit == "word":
        n, noun = len(text.split()), "word"
    elif unit == "line":
        n, noun = len(text.splitlines()), "line"
    else:
        n, noun = len(text), "character"
    return f"`{path}` has {n} {noun}{'' if n == 1 else 's'}."


def _wc_said(noun: str) -> Say:
    def say(match: re.Match[str], result: str) -> str | None:
        found = (
            re.match(r"\s*(\d+)\b", SHELL_OK.sub("", result)) if SHELL_OK.match(result) else None
        )
        if found is None:
            return None
        n = int(found.group(1))
        if noun == "byte":
            return f"`{match['path']}` is {n} byte{'' if n == 1 else 's'}."
        return f"`{match['path']}` has {n} {noun}{'' if n == 1 else 's'}."

    return say


def _mentions_said(match: re.Match[str], result: str) -> str | None:
    text, path = _text(result), match["path"]
    needle = match["word"] or next(
        v for k in ("q1", "q2", "q3", "q4") if (v := match.group(k)) is not None
    )
    if text is None or not needle.strip():
        return None
    found = [
        (n, line) for n, line in enumerate(text.splitlines(), 1) if needle.lower() in line.lower()
    ]
    if not found:
        return f"No: `{path}` does not mention {needle!r}."
    n, line = found[0]
    more = f" (and {len(found) - 1} more lines)" if len(found) > 1 else ""
    return f"Yes: `{path}` mentions {needle!r} on line {n}: {line.strip()}{more}"


def _exists_said(match: re.Match[str], result: str) -> str | None:
    name = match["path"].rsplit("/", 1)[-1]
    for line in result.splitlines():
        if line == f"{name}/" or line.startswith(f"{name}  ("):
            return (
                f"Yes: `{match['path']}` exists ({line[len(name) :].strip(' /()') or 'a folder'})."
            )
    return f"No: there is no `{match['path']}`."


def _shell_said(template: str, pattern: str = r"(.+)") -> Say:
    def say(match: re.Match[str], result: str) -> str | None:
        if not SHELL_OK.match(result):
            return None
        found = re.search(pattern, SHELL_OK.sub("", result).strip())
        return template.format(found.group(1)) if found else None

    return say


def _parent(match: re.Match[str]) -> dict[str, Any]:
    folder = match["path"].rsplit("/", 1)[0] if "/" in match["path"] else "."
    return {"path": folder}


def _wc(flag: str) -> Callable[[re.Match[str]], dict[str, Any]]:
    return lambda m: {"command": f"wc {flag} -- {shlex.quote(m['path'])}"}


def _read(match: re.Match[str]) -> dict[str, Any]:
    return {"path": match["path"]}


PYTHON = r"(?:python\s*3?|the\s+python(?:\s+interpreter)?)"
MEASURE_RULES: tuple[MeasureRule, ...] = (
    _measure(
        "a line of a file",
        "file_read",
        rf"(?:{SHOW})?(?:the\s+)?(?:(?:(?P<which>first|last|final|top|{NUMBER})\s+(?P<count>{NUMBER})?\s*lines?)"
        rf"|line\s+(?:number\s+)?(?P<nth>{NUMBER})){OF_FILE}",
        _read,
        _lines_said,
    ),
    _measure(
        "count in a file",
        "file_read",
        rf"(?:how\s+many\s+(?P<u1>{UNCOUNTED})\s+(?:are\s+(?:there\s+)?in|in|does|do|has)\s+"
        rf"|(?:{SHOW})?(?:the\s+)?(?:(?:number\s+of|total)\s+(?P<u2>{UNITS})"
        rf"|(?P<u3>word|line|character)\s+count)\s+(?:of|in|from)\s+"
        rf"|count\s+(?:the\s+|all\s+(?:the\s+)?)?(?P<u4>{UNCOUNTED})\s+(?:of|in)\s+)"
        rf"{THE}(?:file\s+)?{FILE}(?:\s+(?:have|has|contain|hold))?",
        _read,
        _count_said,
    ),
    _measure(
        "size of a file",
        "shell_exec",
        rf"(?:how\s+(?:big|large)\s+is|how\s+many\s+bytes\s+(?:is|are\s+in|in|does|has)"
        rf"|(?:{SHOW})?(?:the\s+)?(?:file\s+)?size\s+(?:in\s+bytes\s+)?of)\s+"
        rf"{THE}(?:file\s+)?{FILE}(?:\s+in\s+bytes|\s+(?:have|has|take))?",
        _wc("-c"),
        _wc_said("byte"),
    ),
    _measure(
        "does a file mention a text",
        "file_read",
        rf"(?:does|is\s+there)\s+(?:any(?:thing)?\s+)?{THE}(?:file\s+)?{FILE}\s+"
        rf"(?:contain|mention|say|include|have)\s+(?:the\s+(?:word|text|name)\s+)?"
        rf"(?:{QUOTED}|(?P<word>[\w-]+))(?:\s+(?:in\s+it|anywhere))?",
        _read,
        _mentions_said,
    ),
    _measure(
        "does a file exist",
        "list_dir",
        rf"(?:(?:is\s+there|do\s+(?:i|we)\s+have)\s+(?:a|any)\s+(?:file\s+)?(?:called\s+|named\s+)?"
        rf"|does\s+{THE}(?:file\s+)?){FILE}(?:\s+exist)?"
        rf"(?:\s+(?:here|in\s+(?:the|this|my)\s+(?:workspace|folder|project)))?",
        _parent,
        _exists_said,
    ),
    _measure(
        "python version",
        "shell_exec",
        rf"(?:(?:which|what)\s+(?:version\s+of\s+{PYTHON}|{PYTHON}\s+version)"
        rf"(?:\s+(?:is\s+(?:installed|this|there|it|available|here|running)|do\s+(?:i|we)\s+have"
        rf"|(?:does\s+this\s+machine|do\s+you)\s+(?:have|run|use)|are\s+you\s+using))?"
        rf"(?:\s+(?:here|on\s+this\s+machine))?)",
        lambda m: {"command": "python3 --version"},
        _shell_said("{0} is installed (`python3 --version`).", r"(Python\s+\S+)"),
    ),
    _measure(
        "the date",
        "shell_exec",
        r"(?:what(?:'s|\s+is)\s+(?:the\s+)?(?:date|day)(?:\s+(?:today|it\s+today))?"
        r"|what(?:'s|\s+is)\s+today'?s?\s+date|what\s+day\s+is\s+(?:it|today)(?:\s+today)?"
        r"|(?:tell\s+me\s+|give\s+me\s+)?today'?s\s+date)(?:\s+(?:here|on\s+this\s+machine))?",
        lambda m: {"command": "date '+%A %Y-%m-%d'"},
        _shell_said("Today is {0}."),
    ),
    _measure(
        "the operating system",
        "shell_exec",
        r"(?:what|which)\s+(?:operating\s+system|os)\s+(?:is\s+(?:this|it|installed|running)"
        r"|does\s+this\s+(?:machine|computer)\s+(?:run|use|have)|am\s+i\s+(?:on|using))"
        r"(?:\s+(?:here|on\s+this\s+machine))?",
        lambda m: {"command": "uname -sr"},
        _shell_said("This machine runs {0}."),
    ),
    _measure(
        "the time",
        "shell_exec",
        r"what(?:'s|\s+is)\s+the\s+time(?:\s+now)?|what\s+time\s+is\s+it(?:\s+now)?",
        lambda m: {"command": "date '+%H:%M'"},
        _shell_said("It is {0}."),
    ),
)
"""The rules, tried before `ducklm.turn.shortcuts.RULES`."""
BY_NAME = {rule.name: rule for rule in MEASURE_RULES}
LINE_COUNTS = frozenset({"how many lines", "count the lines"})
"""The line-count rules of `ducklm.turn.shortcuts` (`wc -l`), whose answer is stated too."""


def statement(shortcut: Shortcut, task: str, result: str) -> str | None:
    """The sentence stating what `task` asked of the shortcut's `result`, or `None`.

    `None` when the shortcut is no measure rule's, or the result does not give the
    measure (a cut text, a failing command): the result is shown as it is instead.
    """
    text = " ".join(task.split())
    if shortcut.rule in LINE_COUNTS:
        match = re.search(FILE, text)
        return _wc_said("line")(match, result) if match else None
    rule = BY_NAME.get(shortcut.rule)
    match = rule.pattern.match(text) if rule is not None else None
    return rule.say(match, result) if rule is not None and match is not None else None
