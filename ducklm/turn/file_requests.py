"""What a request asks to do with files: delete, rename, move, copy or append.

On the bundled SmolLM2-135M "Delete old.log" became `file_write` over old.log, and
"Rename draft.txt to final.txt" `file_write` over draft.txt: content gone, nothing
deleted or renamed (issue 44). These requests have a shape a rule reads exactly: a verb
of the operation, its object (a file or folder name) and, for a rename, move or copy, a
target after a preposition; for an append, the text. The rules are built from those
parts, not from example sentences, so "get rid of the old.log file", "could you call
draft.txt final.txt instead" or "tack 'milk' onto the end of list.txt" read as well as
the plain imperative.

Two readings come out of here:

- `read_file_request`: the whole request is one operation the rules are sure of (the
  shortcut rules make the call: `FILE_OP_RULES`, registered in `ducklm.turn.shortcuts`);
- `mentioned_operation`: looser, for the approval card: which operation words and
  which file names the request holds anywhere, so a call can be compared with it
  (`ducklm.turn.tool_step.intent`).

A name is a quoted name, a name with an extension or a folder part (`notes/a.md`,
`.env`), or a bare word that "folder" or "directory" goes with. Everything here is pure:
no I/O, no model, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Operation = Literal["delete", "rename", "move", "copy", "append"]
OPERATION_TOOLS: dict[Operation, str] = {
    "delete": "file_delete",
    "rename": "file_move",
    "move": "file_move",
    "copy": "file_copy",
    "append": "file_append",
}

LEAD = (
    r"^\s*(?:(?:please|pls|ok(?:ay)?|now|so|hey|hi|duck|hey duck|kindly|quickly|just)[,\s]+)*"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|i\s+(?:want|need|would like|'d like)"
    r"\s+(?:you\s+)?to\s+|i'd\s+like\s+(?:you\s+)?to\s+|go\s+ahead\s+and\s+|let's\s+"
    r"|help\s+me\s+|(?:please\s+)?)?(?:just\s+|quickly\s+)?"
)
TAIL = (
    r"(?:\s+(?:for\s+me|now|right\s+now|right\s+away|at\s+once|then|too|as\s+well|instead"
    r"|from\s+now\s+on|going\s+forward|for\s+good|permanently"
    r"|(?:from|in)\s+(?:the\s+|this\s+|my\s+)?(?:workspace|project|folder|directory)"
    r"|if\s+you\s+(?:can|could)|thanks?|thank\s+you))*"
)
REMARK = (
    r"(?:\s*[,;\u2014]\s*(?![^,;.!?]*\b(?:then|and|also|after|before|but|too)\b)"
    r"(?:i|i'm|it|it's|its|they|that's|this|since|because|as|we|we're)\b[^,;.!?]{0,60})?"
)
"""A reason or remark after the request ("delete x.log, I don't need it anymore"), as long
as it asks for nothing more (no "and", "then", "also", ...)."""
END = r"\s*(?:,?\s*(?:please|thanks?|thank\s+you))?\s*[.!?]*\s*$"
THE = r"(?:(?:the|my|this|that|our|your)\s+)?"
KIND = r"(?:file|folder|directory|dir|document|doc)"
FOLDER_WORD = r"(?:folder|directory|dir)"
CALLED = r"(?:(?:called|named)\s+)?"
NOT_A_NAME = (
    r"(?:the|this|that|a|an|my|our|your|whole|entire|empty|old|new|current|same|other|every"
    r"|each|all|parent|root|workspace|project|home|top|main)"
)
"""Words before "folder" that say which folder, not its name ("the whole folder")."""

_QUOTE_PAIRS = (("'", "'"), ('"', '"'), ("`", "`"), ("\u2018", "\u2019"), ("\u201c", "\u201d"))
# A path: a name with an extension (`a.txt`, `notes/a.md`), a dotfile, or a name with a
# folder part (`logs/`, `src/old`).
_PATHLIKE = (
    r"(?:\.{0,2}/)?[\w-]+(?:[./][\w-]+)*\.[A-Za-z0-9]{1,8}(?![\w/])"
    r"|\.[\w-]+(?:\.[\w-]+)*(?![\w/])"
    r"|(?:\.{0,2}/)?[\w.-]+(?:/[\w.-]+)+/?|[\w.-]+/"
)
_FILE_NAME = re.compile(rf"(?<![\w/.-])(?:{_PATHLIKE})", re.I)


def _quoted(group: str) -> str:
    alternatives = [
        rf"{re.escape(a)}(?P<{group}_q{i}>[^{re.escape(b)}\n]{{1,200}}){re.escape(b)}"
        for i, (a, b) in enumerate(_QUOTE_PAIRS)
    ]
    return "(?:" + "|".join(alternatives) + ")"


def _name(group: str, *, bare: bool = False, quoted: bool = True) -> str:
    """A file or folder name in group `group` (quoted, path-like, or beside "folder").

    `bare`: a lone word counts too (a move's or copy's target folder: "to archive").
    `quoted`: quoted text may be the name (not after "put", where it is content).
    """
    parts = [
        _quoted(group + "a") if quoted else "(?!)",
        rf"{FOLDER_WORD}\s+{CALLED}(?P<{group}_d>[\w.-]+)",
        rf"(?!{NOT_A_NAME}\b)(?P<{group}_e>[\w.-]+)\s+{FOLDER_WORD}",
        rf"(?P<{group}_p>{_PATHLIKE})",
    ]
    if bare:
        parts.append(rf"(?!{NOT_A_NAME}\b)(?P<{group}_w>[\w-]+)")
    return rf"{THE}(?:(?:file|document|doc)\s+{CALLED})?(?:{'|'.join(parts)})(?:\s+{KIND})?"


def _text(group: str) -> str:
    """The text of an append: in quotes."""
    return _quoted(group)


SRC, DST, TXT = _name("src"), _name("dst"), _text("txt")
SRC_UNQUOTED = _name("src", quoted=False)
DST_FOLDER = _name("dst", bare=True)

DELETE_VERB = (
    r"(?:delete|remove|erase|trash|rm|del|unlink|discard|destroy|bin|scrap|ditch|nuke"
    r"|get\s+rid\s+of|(?:throw|chuck|toss)\s+(?:away|out)|do\s+away\s+with|wipe\s+out)"
)
RENAME_VERB = r"(?:rename|re-name|retitle)"
MOVE_VERB = r"(?:move|mv|relocate|transfer|shift|drag|file\s+away)"
COPY_VERB = r"(?:copy|cp|duplicate|clone|replicate)"
TO = r"(?:to|into|in|inside|under|over\s+to|onto)"
AT_END = (
    r"(?:to|onto|into|at|on|to\s+the\s+(?:end|bottom)\s+of|at\s+the\s+(?:end|bottom)\s+of"
    r"|on\s+the\s+end\s+of|onto\s+the\s+end\s+of|below\s+the\s+last\s+line\s+of)"
)
END_ONLY = (
    r"(?:to\s+the\s+(?:end|bottom)\s+of|at\s+the\s+(?:end|bottom)\s+of|on\s+the\s+end\s+of"
    r"|onto\s+the\s+end\s+of|after\s+the\s+last\s+line\s+of|below\s+the\s+last\s+line\s+of)"
)
LINE = (
    r"(?:(?:a|one|another|the|this)\s+(?:new\s+)?(?:line|sentence|note|entry|text|row|item)"
    r"(?:\s+(?:saying|that\s+says|reading|with(?:\s+the\s+text)?|of|containing))?\s+"
    r"|(?:the\s+)?(?:text|words?|line|sentence|phrase)\s+)?"
)


@dataclass(frozen=True)
class FileRequest:
    """One file operation a whole request asks for, as the rules read it."""

    operation: Operation
    source: str
    """The file the operation acts on (the one appended to, for an append)."""
    target: str = ""
    """Where a rename, move or copy puts it."""
    text: str = ""
    """What an append adds."""

    def call(self) -> tuple[str, dict[str, Any]]:
        """The tool call that does it: its name and arguments."""
        tool = OPERATION_TOOLS[self.operation]
        if self.operation == "delete":
            return tool, {"path": self.source}
        if self.operation == "append":
            return tool, {"path": self.source, "text": self.text}
        return tool, {"source": self.source, "destination": self.target}


@dataclass(frozen=True)
class _Shape:
    operation: Operation
    pattern: re.Pattern[str]


def _shape(operation: Operation, body: str) -> _Shape:
    return _Shape(operation, re.compile(LEAD + body + TAIL + REMARK + END, re.I))


DONE: dict[Operation, str] = {
    "delete": r"(?:deleted|removed|erased|trashed|binned|scrapped|discarded|gone)",
    "rename": r"(?:renamed)",
    "move": r"(?:moved|relocated|transferred|shifted|put)",
    "copy": r"(?:copied|duplicated|cloned|backed\s+up)",
}
"""The participle of each operation: "I'd like X renamed to Y", "X should be deleted"."""
VERBS: dict[Operation, str] = {
    "delete": DELETE_VERB,
    "rename": RENAME_VERB,
    "move": MOVE_VERB,
    "copy": COPY_VERB,
}
REST: dict[Operation, str] = {
    "delete": "",
    "rename": rf"\s+(?:to|as|into)\s+{DST}",
    "move": rf"\s+{TO}\s+{DST_FOLDER}",
    "copy": rf"\s+(?:{TO}|as|at)\s+{DST_FOLDER}",
}
"""What follows the object: the new name or the place."""
WANT = r"(?:i(?:'d|\s+would)?\s+(?:like|want|need)|(?:please\s+)?(?:have|get))\s+"
MODAL = r"(?:should|must|can|could|needs?\s+to|has\s+to|have\s+to|is\s+to|ought\s+to)\s+be\s+"
TOPIC = r"(?:\s+[^,:;.!?]{1,60}?)?\s*(?:[,:;.\u2014]|\s-)\s*(?:(?:please|so|just)\s+)*"
"""An object put first, and a remark before the verb: "old.log is not needed, delete it"."""
AROUND_IT: dict[Operation, str] = {
    "delete": r"(?:throw|chuck|toss|wipe)\s+it\s+(?:away|out)|get\s+rid\s+of\s+it",
    "copy": r"back\s+it\s+up",
}
"""Verbs whose particle follows "it": "throw it away", "back it up"."""


def _orders(operation: Operation) -> tuple[_Shape, ...]:
    """The word orders every operation but append takes, from its verb, participle and rest.

    The verb before its object ("delete X"), the object wanted done ("I'd like X
    deleted"), the object that should be done ("X should be deleted"), and the object
    first with "it" after the verb ("X is old, delete it").
    """
    verb, done, rest = VERBS[operation], DONE[operation], REST[operation]
    return (
        _shape(operation, rf"{verb}\s+{SRC}{rest}"),
        _shape(operation, rf"{WANT}{SRC}\s+{done}{rest}"),
        _shape(operation, rf"{SRC}\s+{MODAL}{done}{rest}"),
        _shape(operation, rf"{SRC}{TOPIC}(?:{verb}\s+it|{AROUND_IT.get(operation, '(?!)')}){rest}"),
    )


SHAPES: tuple[_Shape, ...] = (
    *_orders("delete"),
    _shape("delete", rf"{SRC}\s+(?:can|should|must|may)\s+go"),
    *_orders("rename"),
    _shape("rename", rf"{RENAME_VERB}\s+{SRC}\s+so\s+(?:that\s+)?it(?:'s|\s+is)\s+{CALLED}{DST}"),
    _shape("rename", rf"(?:change|switch)\s+the\s+(?:file\s+)?name\s+of\s+{SRC}\s+to\s+{DST}"),
    _shape("rename", rf"give\s+{SRC}\s+the\s+(?:new\s+)?name\s+{DST}"),
    _shape("rename", rf"call\s+{SRC}\s+{DST}"),
    _shape("rename", rf"{SRC}\s+{MODAL}(?:called|named)\s+{DST}"),
    # the shell's own words, without a preposition: "mv a.txt b.txt", "cp a.txt docs/"
    _shape("move", rf"mv\s+{SRC}\s+{DST_FOLDER}"),
    _shape("copy", rf"cp\s+{SRC}\s+{DST_FOLDER}"),
    # "put" moves a named file; put with quoted text writes it (`shortcuts.RULES`)
    _shape("move", rf"(?:put|place|stick)\s+{SRC_UNQUOTED}\s+{TO}\s+{DST_FOLDER}"),
    *_orders("move"),
    *_orders("copy"),
    _shape(
        "copy",
        rf"(?:make|create|save|keep)\s+(?:a|an|one)\s+(?:(?:extra|second|backup)\s+)?"
        rf"(?:copy|duplicate|backup)\s+of\s+{SRC}\s+(?:{TO}|as|at|called|named)\s+{DST_FOLDER}",
    ),
    _shape("copy", rf"back\s*up\s+{SRC}\s+(?:{TO}|as|at)\s+{DST_FOLDER}"),
    # append: verb + text + to/at the end of + file; "append to X: text"
    _shape("append", rf"(?:append|add|tack(?:\s+on)?|stick)\s+{LINE}{TXT}\s+{AT_END}\s+{SRC}"),
    _shape("append", rf"(?:write|put|insert|place)\s+{LINE}{TXT}\s+{END_ONLY}\s+{SRC}"),
    _shape(
        "append",
        rf"(?:append|add)\s+(?:{LINE})?(?:to|onto)\s+(?:the\s+end\s+of\s+)?{SRC}"
        rf"(?:\s*:\s*|\s+(?:saying|that\s+says|reading|with(?:\s+the\s+text)?|the\s+(?:line|text))\s+)"
        rf"{TXT}",
    ),
    _shape("append", rf"extend\s+{SRC}\s+with\s+{LINE}{TXT}"),
)

# Words of each operation anywhere in a request, for the card's comparison.
_MENTION_WORDS: tuple[tuple[Operation, str], ...] = (
    ("rename", rf"\b{RENAME_VERB}\b|\bname\s+of\b|\bbe\s+(?:called|named)\b"),
    ("copy", rf"\b{COPY_VERB}\b|\b(?:copy|duplicate|backup)\s+of\b|\bback\s*up\b"),
    ("move", rf"\b{MOVE_VERB}\b"),
    ("append", r"\b(?:append\w*|add(?:s|ed|ing)?|tack\w*|extend\w*)\b|\b(?:end|bottom)\s+of\b"),
    ("delete", rf"\b{DELETE_VERB}\b|\b(?:deleted|removed|erased|trashed)\b"),
)
MENTIONS = tuple((op, re.compile(pattern, re.I)) for op, pattern in _MENTION_WORDS)


def read_file_request(task: str) -> FileRequest | None:
    """The one file operation `task` asks for as a whole, if the rules are sure of it."""
    text = " ".join(task.split())
    if not text or len(text) > 300 or "\n" in task.strip():
        return None
    for shape in SHAPES:
        match = shape.pattern.match(text)
        if match is None:
            continue
        found = _request(shape.operation, match)
        if found is not None:
            return found
    return None


@dataclass(frozen=True)
class Mentioned:
    """The operations a request names anywhere, and the file names it holds."""

    operations: frozenset[Operation]
    names: frozenset[str]
    exact: FileRequest | None = None
    """The whole request read as one operation, when the rules are sure of it."""

    def names_path(self, path: str) -> bool:
        """Whether the request names `path` (by its path or by its file name)."""
        wanted = _norm(path)
        return any(
            _norm(n) in (wanted, wanted.rsplit("/", 1)[-1]) or _norm(n).endswith("/" + wanted)
            for n in self.names
        )


def mentioned_operation(task: str) -> Mentioned:
    """What `task` says about file operations, exact where a rule reads it whole."""
    exact = read_file_request(task)
    operations = {op for op, rx in MENTIONS if rx.search(task)}
    names = {_norm(m.group(0)) for m in _FILE_NAME.finditer(task)}
    names |= {_norm(q) for a, b in _QUOTE_PAIRS for q in re.findall(
        rf"{re.escape(a)}([^{re.escape(b)}\n]{{1,200}}){re.escape(b)}", task)}  # fmt: skip
    if exact is not None:
        operations = {exact.operation}
        names |= {_norm(p) for p in (exact.source, exact.target) if p}
    return Mentioned(frozenset(operations), frozenset(n for n in names if n), exact)


def _request(operation: Operation, match: re.Match[str]) -> FileRequest | None:
    source = _group(match, "src")
    if source is None:
        return None
    if operation == "delete":
        return FileRequest("delete", source)
    if operation == "append":
        text = _group(match, "txt", quoted_only=True)
        return FileRequest("append", source, text=text) if text else None
    target = _group(match, "dst")
    if target is None or _norm(target) == _norm(source):
        return None
    folder = any(match.groupdict().get(f"dst_{k}") for k in ("w", "d", "e"))
    if folder and operation in ("move", "copy") and not target.endswith("/"):
        target += "/"  # "move a.txt to archive": a folder, made if missing
    if operation == "rename" and "/" not in target.rstrip("/") and "/" in source:
        target = source.rsplit("/", 1)[0] + "/" + target  # renamed where it is
    return FileRequest(operation, source, target)


def _group(match: re.Match[str], group: str, *, quoted_only: bool = False) -> str | None:
    """The name (or text) that group `group` matched, in whichever form."""
    found = match.groupdict()
    suffixes = [f"_q{i}" for i in range(len(_QUOTE_PAIRS))]
    if not quoted_only:
        suffixes = [f"a_q{i}" for i in range(len(_QUOTE_PAIRS))] + ["_d", "_e", "_p", "_w"]
    for suffix in suffixes:
        value = found.get(group + suffix)
        if value is not None and value.strip():
            return value if quoted_only else value.strip()
    return None


def _norm(path: str) -> str:
    path = path.strip().strip("`'\"").removeprefix("./")
    return path.rstrip("/").lower() if path not in ("/", "") else path


FileRule = tuple[str, str, re.Pattern[str], Callable[[re.Match[str]], dict[str, Any]]]


def _shortcut_args(operation: Operation) -> Callable[[re.Match[str]], dict[str, Any]]:
    def args(match: re.Match[str]) -> dict[str, Any]:
        found = _request(operation, match)
        return found.call()[1] if found is not None else {"path": ""}  # empty: no shortcut

    return args


FILE_OP_RULES: tuple[FileRule, ...] = tuple(
    (f"{shape.operation} a file", OPERATION_TOOLS[shape.operation], shape.pattern,
     _shortcut_args(shape.operation))
    for shape in SHAPES
)  # fmt: skip
"""The shortcut rules (name, tool, whole-request pattern, arguments), for `shortcuts.RULES`."""
