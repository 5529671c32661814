"""Rule shortcuts: requests whose tool and arguments are certain from the text alone.

"List the files in the workspace", "what is in notes.md?", "create a file called todo.txt
containing 'buy milk'", "how many lines does notes.md have?", "search for 'duck'": a tiny
model picks the wrong tool for these or invents their arguments, while a rule reads them
exactly. A rule matches the whole request (one sentence, optionally "please" / "can you"
in front, an end mark behind), so anything more ("... and then fix it", "... because")
falls through to the model as before. A rule names a file only by a name with an
extension, content only in quotes; paths are the workspace's (the tool confines them as
for any call, and the tool policy judges the call as it would the model's).

Everything here is pure: no I/O, no model, no clock.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ducklm.turn.directive_schema import ANSWER

SHORTCUT_REASON = "The request names its tool and arguments ({rule}): {tool} {args}."
NO_TOOL_REASON = "The request shows no sign of needing a tool ({rule}): the thinker answers it."
NO_TOOL = ANSWER
"""`Shortcut.tool` when the rules are sure the request needs no tool (`ducklm.turn.tool_cues`):
the directive's own word for "no tool"."""

LEAD = r"^\s*(?:(?:please|ok|now|so|hey duck|duck)[,\s]+)*(?:(?:can|could|would|will) you\s+)?"
END = r"\s*(?:,?\s*please)?\s*[.!?]*\s*$"
FILE = r"(?P<path>(?:\.{0,2}/)?[\w-]+(?:[./][\w-]+)*\.[A-Za-z0-9]{1,8})"
FOLDER = r"(?P<path>[\w-]+(?:/[\w-]+)*/?)"
QUOTED = (
    r"""(?:'(?P<q1>[^']*)'|"(?P<q2>[^"]*)"|\u2018(?P<q3>[^\u2019]*)\u2019"""
    r"""|\u201c(?P<q4>[^\u201d]*)\u201d)"""
)
HERE = (
    r"(?:(?:in|of|inside)\s+(?:the\s+|this\s+|my\s+|our\s+)?"
    r"(?:workspace|folder|directory|project)|here)"
)
THE = r"(?:the\s+|my\s+|this\s+|that\s+)?"


@dataclass(frozen=True)
class Shortcut:
    """A tool call the router proposes itself, and the rule that found it."""

    tool: str
    """The tool to call, or `NO_TOOL`: no call, the thinker answers."""
    args: dict[str, Any] = field(default_factory=dict)
    rule: str = ""
    """The rule's name, e.g. "list the files"."""

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> Shortcut:
        """A shortcut from its dict (a checkpoint without the types, or the event's)."""
        return cls(str(fields["tool"]), dict(fields.get("args") or {}), str(fields.get("rule", "")))

    def reason(self) -> str:
        """One sentence for `route_decided`: which rule, which call."""
        if self.tool == NO_TOOL:
            return NO_TOOL_REASON.format(rule=self.rule)
        return SHORTCUT_REASON.format(rule=self.rule, tool=self.tool, args=json.dumps(self.args))


@dataclass(frozen=True)
class Rule:
    """One shortcut rule: a whole-request pattern and the call it makes."""

    name: str
    tool: str
    pattern: re.Pattern[str]
    args: Callable[[re.Match[str]], dict[str, Any]]


def _rule(name: str, tool: str, body: str, args: Callable[[re.Match[str]], dict[str, Any]]) -> Rule:
    return Rule(name, tool, re.compile(LEAD + body + END, re.I), args)


def _quoted(match: re.Match[str]) -> str:
    return next(v for k in ("q1", "q2", "q3", "q4") if (v := match.group(k)) is not None)


def _folder(match: re.Match[str]) -> dict[str, Any]:
    path = (match.groupdict().get("path") or ".").rstrip("/") or "."
    return {"path": "." if path.lower() in {"workspace", "the workspace"} else path}


def _count_lines(match: re.Match[str]) -> str:
    # `wc` reads; the policy's rules classify it read-only, so it runs without a question.
    return f"wc -l -- {shlex.quote(match['path'])}"


RULES: tuple[Rule, ...] = (
    _rule(
        "list the files",
        "list_dir",
        rf"(?:list|show(?:\s+me)?|what\s+are|which\s+are)\s+(?:all\s+)?{THE}files"
        rf"(?:\s+and\s+folders)?(?:\s+(?:are\s+)?{HERE})?",
        _folder,
    ),
    _rule(
        "list the files in a folder",
        "list_dir",
        rf"(?:list|show(?:\s+me)?|what\s+are)\s+(?:all\s+)?{THE}files(?:\s+and\s+folders)?\s+"
        rf"in\s+(?:the\s+)?{FOLDER}(?:\s+(?:folder|directory))?",
        _folder,
    ),
    _rule(
        "what files are there",
        "list_dir",
        rf"(?:what|which)\s+files\s+(?:are\s+(?:there|here)|do\s+(?:i|we)\s+have)"
        rf"(?:\s+{HERE})?",
        _folder,
    ),
    _rule("ls", "list_dir", r"ls", _folder),
    _rule(
        "what is in a file",
        "file_read",
        rf"(?:what(?:'s|\s+is)\s+in(?:side)?|what\s+does)\s+{THE}(?:file\s+)?{FILE}"
        rf"(?:\s+(?:say|contain))?",
        lambda m: {"path": m["path"]},
    ),
    _rule(
        "show a file",
        "file_read",
        rf"(?:show(?:\s+me)?|read|open|print|display|cat)\s+(?:the\s+contents?\s+of\s+)?"
        rf"{THE}(?:file\s+)?{FILE}",
        lambda m: {"path": m["path"]},
    ),
    _rule(
        "create a file with content",
        "file_write",
        rf"(?:create|make|write)\s+(?:a\s+|the\s+)?(?:new\s+)?file\s+(?:called\s+|named\s+)?"
        rf"{FILE}\s+(?:containing|with(?:\s+the)?(?:\s+(?:text|content|contents|words?))?|that\s+says)"
        rf"\s+{QUOTED}",
        lambda m: {"path": m["path"], "content": _quoted(m)},
    ),
    _rule(
        "write text to a file",
        "file_write",
        rf"(?:write|save|put)\s+{QUOTED}\s+(?:to|into|in|as)\s+(?:a\s+|the\s+)?(?:file\s+)?"
        rf"(?:called\s+|named\s+)?{FILE}",
        lambda m: {"path": m["path"], "content": _quoted(m)},
    ),
    _rule(
        "how many lines",
        "shell_exec",
        rf"how\s+many\s+lines\s+(?:does|do|are\s+in|are\s+there\s+in|in|has)\s+{THE}"
        rf"(?:file\s+)?{FILE}(?:\s+(?:have|has|contain))?",
        lambda m: {"command": _count_lines(m)},
    ),
    _rule(
        "count the lines",
        "shell_exec",
        rf"count\s+the\s+lines\s+(?:of|in)\s+{THE}(?:file\s+)?{FILE}",
        lambda m: {"command": _count_lines(m)},
    ),
    _rule(
        "search for a text",
        "search_files",
        rf"(?:search|grep|look)\s+(?:through\s+)?(?:{THE}(?:workspace|files|project)\s+)?"
        rf"for\s+(?:the\s+(?:word|text|string|phrase)\s+)?(?:{QUOTED}|(?P<word>[\w-]+))"
        rf"(?:\s+{HERE}|\s+in\s+{THE}files)?",
        lambda m: {"query": m["word"] or _quoted(m)},
    ),
    _rule(
        "which files mention a text",
        "search_files",
        rf"(?:which|what)\s+files\s+(?:mention|contain|say)\s+(?:the\s+(?:word|text)\s+)?"
        rf"(?:{QUOTED}|(?P<word>[\w-]+))",
        lambda m: {"query": m["word"] or _quoted(m)},
    ),
)


@functools.cache
def all_rules() -> tuple[Rule, ...]:
    """The rules here and those kept in modules of their own, in the order they are tried."""
    # Imported here: those modules build their rules on this one's `Rule` and patterns.
    from ducklm.turn.file_requests import FILE_OP_RULES  # noqa: PLC0415
    from ducklm.turn.measure_rules import MEASURE_RULES  # noqa: PLC0415

    return (*MEASURE_RULES, *RULES, *(Rule(*spec) for spec in FILE_OP_RULES))


def find_shortcut(task: str, tools: frozenset[str]) -> Shortcut | None:
    """The call that `task` asks for beyond doubt, if a rule knows it and the tool is offered."""
    text = " ".join(task.split())
    if not text or len(text) > 300 or "\n" in task.strip():
        return None
    for rule in all_rules():
        if rule.tool not in tools:
            continue
        match = rule.pattern.match(text)
        if match is not None:
            args = rule.args(match)
            if all(str(value).strip() for value in args.values()):
                return Shortcut(rule.tool, args, rule.name)
    return None
