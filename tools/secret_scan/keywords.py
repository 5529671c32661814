r"""Values assigned to secret-like names (`password = ...`, `"token": "..."`), with an entropy test.

The first line is detect-secrets' `KeywordDetector`: its names (`password`, `secret`,
`api_key`, `private_key`, ...) and its assignment forms for config files and for code
(`name: value`, `name = "value"`, `name := value`, `"value" == name`, ...), all of them,
since a tool result has no file type.

The second line, `_OWN_NAMES`, `_OWN_FORM` and `_secret_name`: names the library does
not have (`token`, `auth`, `credentials`, `access_key`, `client-key-data`, salts), spelled
with `-` and in camelCase as configs spell them, and PHP's `define('DB_PASSWORD', '...')`.

Speed: one search of the (lower-cased) text finds the lines a name is on; those lines
are joined with vertical tabs, which the library's value pattern (`[^\v'"]*`) stops at,
and each form runs once over the joined lines instead of once a line.

A value found either way is kept only if it could be a credential: no spaces, at least
`MIN_CHARS` long, none of the library's own false-positive filters (templates, `$VAR`,
`get_secret()`, sequences, UUIDs, ids), not a name in code (`self.token`), not a path or
a URL (a password in a URL is `formats.py`'s), and at least `MIN_ENTROPY` bits a char.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from ducklm.tools.secret_scan.found import Found

MIN_CHARS = 8
MIN_ENTROPY = 3.0
"""Bits per character: `hunter2hunter2` has 2.8, `Tr0ub4dor&3` 3.3, an AWS secret key ~4.8."""
MAX_LINE_CHARS = 4_000
"""Longer lines (minified code, base64 blobs) are looked at in their first part only."""
_JOIN = "\v"
# Every name below has one of these in it (a unit test checks the library's names too).
_ROOTS = ("key", "pass", "pwd", "secret", "token", "auth", "credential", "salt", "contrase")

# Second line: names detect-secrets' keyword list lacks (it has no `token` at all).
_OWN_NAMES = (
    "token",
    "auth",
    "credential",
    "passphrase",
    "salt",
    *(f"{word}[-_.]?key" for word in ("access", "secret", "signing", "encryption", "master")),
    *(f"{word}[-_.]?key" for word in ("session", "client", "account", "service")),
)
# A name holds a secret if one of its words is one of these...
_SECRET_WORDS = frozenset(
    {"password", "passwd", "pwd", "passphrase", "secret", "token", "auth", "apikey"}
    | {"credential", "credentials", "salt"}
)
# ... or a word before `key` (`access_key`, `clientKey`, `client-key-data`) is.
_KEY_WORDS = frozenset(
    {"api", "access", "secret", "private", "priv", "client", "auth", "signing"}
    | {"encryption", "master", "account", "service", "db", "database", "session"}
)
# A name whose last word is one of these holds facts about a secret, not the secret.
_META_WORDS = frozenset(
    {"url", "uri", "endpoint", "type", "types", "id", "ids", "name", "names", "file"}
    | {"path", "dir", "length", "len", "count", "size", "limit", "ttl", "timeout"}
    | {"header", "prefix", "format", "kind", "field", "method", "mode", "env", "var"}
    | {"expires", "expiry", "at", "hash", "provider", "class", "error", "required"}
    | {"number", "index", "start", "end", "pos", "list", "map", "handler", "store"}
)
_OWN_FORM = re.compile(
    r"""(?P<name>[A-Za-z_][\w.\-]*)['"\]]{0,2}[ \t]*(?::=?|={1,3}|=>)[ \t]*"""
    r"""(?:(?P<q>['"`])(?P<quoted>[^'"`\n\v]+)(?P=q)|(?P<bare>[^\s'"`,;]+))"""
)
_PHP_DEFINE = re.compile(
    r"""define\(\s*(['"])(?P<name>\w+)\1\s*,\s*(['"])(?P<quoted>[^'"\n\v]+)\3"""
)
_NAME = re.compile(r"[A-Za-z_][\w.\-]*")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# Words without digits (`self.token`, `DEFAULT_SECRET`, `same-origin`, `get_key()`, `x})`):
# a name in code or a placeholder, not a generated secret.
WORDS_ONLY = re.compile(r"[A-Za-z_]+(?:[-.:][A-Za-z_]+)*[()\[\]{},;:]*")
_GREP_PREFIX = re.compile(r"^[^\s:]+:\d+[:-]")
_CALL = re.compile(r"\w\(.*\)")
_NOT_A_VALUE = ("/", "./", "../", "~/", "(", "[", "{", "<")


@dataclass(frozen=True)
class _Library:
    """detect-secrets' keyword forms, and the search for the lines that have a name."""

    names: re.Pattern[str]
    """The names, the library's and ours, in lower case."""
    names_any_case: re.Pattern[str]
    forms: tuple[tuple[re.Pattern[str], int], ...]
    """Each assignment form that starts with a name, with the number of its value's group."""
    backwards: tuple[tuple[re.Pattern[str], int], ...]
    """The forms with the value first (`"value" == password`)."""

    def names_in(self, text: str) -> Iterator[re.Match[str]]:
        """The names in `text`, searched in its lower case: `re.IGNORECASE` is 10x slower."""
        lower = text.lower()
        if len(lower) == len(text):  # a few Unicode letters change length in lower case
            return self.names.finditer(lower)
        return self.names_any_case.finditer(text)


@cache
def _library() -> _Library:
    from detect_secrets.plugins import keyword  # noqa: PLC0415  ~0.2 s: on the first scan

    forms: dict[re.Pattern[str], int] = {}
    for table in keyword.REGEX_BY_FILETYPE.values():
        forms.update(table)
    backwards = keyword.PRECEDED_BY_EQUAL_COMPARISON_SIGNS_QUOTES_REQUIRED_REGEX
    names = (*keyword.DENYLIST, *_OWN_NAMES)
    # Python's re tries every name at every position; a look-ahead of their first
    # letters skips most positions at once.
    pattern = f"(?=[{''.join(sorted({name[0] for name in names}))}])(?:{'|'.join(names)})"
    return _Library(
        re.compile(pattern),
        re.compile(pattern, re.IGNORECASE),
        tuple((form, group) for form, group in forms.items() if form is not backwards),
        ((backwards, forms[backwards]),),
    )


def find_assigned(text: str) -> Iterator[Found]:
    """Every plausible secret value assigned to a secret-like name in `text`."""
    library = _library()
    lines = _Lines.of(text, _name_lines(text))
    if not lines.starts:
        return
    spans: dict[tuple[int, int], str] = {}
    for hit in library.names_in(lines.joined):
        head = _name_start(lines.joined, hit.start())
        if lines.joined.endswith("://", 0, head):
            continue  # a URL's user name (`https://x-access-token:...@`): `formats.py`'s
        # Each form starts with the library's name; `"value" == name` below does not.
        for pattern, group in library.forms:
            match = pattern.match(lines.joined, hit.start())
            # Its `\s*` would go on to the next line (`for secret in secrets:` then code).
            if match is not None and _JOIN not in match.group(0):
                name = _last_name(lines.joined, match.start(group), match.start())
                spans.setdefault(match.span(group), _kind(name))
        if match := _OWN_FORM.match(lines.joined, head):
            _own(match, spans)
    for match in _PHP_DEFINE.finditer(lines.joined):
        _own(match, spans)
    for pattern, group in library.backwards:
        for match in pattern.finditer(lines.joined):
            if _JOIN not in match.group(0):
                spans.setdefault(match.span(group), "secret")
    for (start, end), kind in spans.items():
        if start >= 0 and (found := lines.found(start, end, kind)) is not None:
            yield found


def _own(match: re.Match[str], spans: dict[tuple[int, int], str]) -> None:
    group = "quoted" if match.group("quoted") is not None else "bare"
    if _secret_name(match.group("name")):
        spans.setdefault(match.span(group), _kind(match.group("name")))


def _name_lines(text: str) -> Iterator[int]:
    """Offsets of the names' roots in `text`, line by line (`str.find` is a memchr)."""
    lower = text.lower()
    if len(lower) != len(text):  # a few Unicode letters change length in lower case
        yield from (m.start() for m in re.finditer("|".join(_ROOTS), text, re.IGNORECASE))
        return
    found: set[int] = set()
    for root in _ROOTS:
        at = lower.find(root)
        while at >= 0:
            found.add(at)
            line_end = lower.find("\n", at)
            at = -1 if line_end < 0 else lower.find(root, line_end)
    yield from sorted(found)


def _name_start(text: str, at: int) -> int:
    """Where the name around `at` starts (`AWS_SESSION_TOKEN` for its `TOKEN`)."""
    while at > 0 and (text[at - 1].isalnum() or text[at - 1] in "_.-"):
        at -= 1
    return at


@dataclass(frozen=True)
class _Lines:
    """The lines of a text that have a name on them, joined by `_JOIN`."""

    text: str
    joined: str
    starts: list[int]
    """Where each line starts in `joined`."""
    origins: list[int]
    """Where each line starts in `text`."""

    @staticmethod
    def of(text: str, offsets: Iterator[int]) -> _Lines:
        """The lines of `text` that the (ascending) `offsets` lie on."""
        parts, starts, origins, done, at = [], [], [], -1, 0
        for offset in offsets:
            start = text.rfind("\n", 0, offset) + 1
            if start <= done:
                continue  # a line with two names is taken once
            end = text.find("\n", offset)
            done = end = len(text) if end < 0 else end
            line = text[start : min(end, start + MAX_LINE_CHARS)].replace(_JOIN, " ")
            parts.append(line)
            starts.append(at)
            origins.append(start)
            at += len(line) + 1
        return _Lines(text, _JOIN.join(parts), starts, origins)

    def found(self, start: int, end: int, kind: str) -> Found | None:
        """The value at `[start, end)` of `joined` in `text`, if it could be a secret."""
        index = bisect.bisect_right(self.starts, start) - 1
        line_end = self.joined.find(_JOIN, start)
        line = self.joined[self.starts[index] : len(self.joined) if line_end < 0 else line_end]
        # A `grep -n` line's `path:12:` is no part of the code (its `:` reads as `x: y`).
        line = _GREP_PREFIX.sub("", line, count=1)
        value = self.joined[start:end]
        if _JOIN in value or not plausible(value, line):
            return None
        shift = self.origins[index] - self.starts[index]
        return Found(start + shift, end + shift, kind)


def _last_name(text: str, before: int, after: int) -> str:
    """The last name in `text[after:before]`: the whole `AWS_SECRET_ACCESS_KEY`."""
    start = text.rfind(_JOIN, 0, after) + 1  # from the line's start, for the name's head
    names = _NAME.findall(text, start, before)
    return names[-1] if names else ""


def _secret_name(name: str) -> bool:
    """Whether a name says it holds a secret: `DB_PASSWORD`, `accessKey`, `auth`."""
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words or words[-1] in _META_WORDS:
        return False
    pairs = itertools.pairwise(words)
    return any(w in _SECRET_WORDS for w in words) or any(
        a in _KEY_WORDS and b == "key" for a, b in pairs
    )


def plausible(value: str, line: str) -> bool:
    """Whether `value`, assigned to a secret name on `line`, could be a credential."""
    if len(value) < MIN_CHARS or any(c.isspace() for c in value) or "://" in value:
        return False
    if value.startswith(_NOT_A_VALUE) or WORDS_ONLY.fullmatch(value) or _CALL.search(value):
        return False  # a path, a call or a list, a name in code or a placeholder
    heuristic = _heuristic()
    filters = (
        heuristic.is_templated_secret,
        heuristic.is_prefixed_with_dollar_sign,
        heuristic.is_sequential_string,
        heuristic.is_potential_uuid,
        heuristic.is_not_alphanumeric_string,
    )
    if any(check(value) for check in filters) or heuristic.is_likely_id_string(value, line):
        return False
    # `secret = get_secret()`, `token = request.headers["token"]`
    return entropy(value) >= MIN_ENTROPY and not heuristic.is_indirect_reference(line)


def load() -> None:
    """Import the library's keyword forms and filters (for the tool step: off the loop)."""
    _library()
    _heuristic()


@cache
def _heuristic() -> Any:
    from detect_secrets.filters import heuristic  # noqa: PLC0415  on the first scan

    return heuristic


def entropy(value: str) -> float:
    """Shannon entropy of `value`'s characters, in bits per character."""
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in Counter(value).values())


def _kind(name: str) -> str:
    """What a marker calls the value of `name`."""
    words = {w.lower() for w in _WORDS.findall(name)}
    if "aws" in words and "secret" in words:
        return "AWS secret key"
    return next((kind for kind, hints in _KINDS if words & hints), "secret")


_KINDS = (
    ("password", frozenset({"password", "passwd", "pwd", "pass", "passphrase"})),
    ("token", frozenset({"token"})),
    ("API key", frozenset({"api", "apikey"})),
    ("private key", frozenset({"private"})),
    ("credential", frozenset({"auth", "credential", "credentials"})),
    ("secret", frozenset({"secret"})),
    ("key", frozenset({"key", "salt"})),
)
