"""Bash's quote removal on one word, and scanning past delimited text.

bashlex gets mixed quoting wrong (`'a'"b"` comes back as `a'"b"`), which would let
`> ''"/etc/passwd"` pass for a workspace file, so words are unquoted here instead.
"""

from __future__ import annotations

import re

_ANSI_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|.)")
_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


def unquote(source: str) -> str | None:
    """Bash's quote removal on one word as written; None if a quote is left open.

    Expansions (`$x`) are kept as written.
    """
    out: list[str] = []
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            out.append(source[i + 1 : i + 2].replace("\n", ""))
            i += 2
        elif c == "'" or source.startswith("$'", i):
            i = _unquote_single(source, i, out)
        elif c == '"' or source.startswith('$"', i):
            i = _unquote_double(source, i + (1 if c == '"' else 2), out)
        else:
            out.append(c)
            i += 1
        if i < 0:
            return None
    return "".join(out)


def _unquote_single(source: str, i: int, out: list[str]) -> int:
    """Append the text of a `'...'` or `$'...'` part at `i`; the index after it, or -1."""
    ansi = source[i] == "$"
    start = i + 2 if ansi else i + 1
    end = skip_delimited(source, start, "'") if ansi else source.find("'", start) + 1
    if end <= 0:
        return -1
    body = source[start : end - 1]
    text = _ansi_unescape(body) if ansi else body
    if text is None:
        return -1
    out.append(text)
    return end


def _unquote_double(source: str, i: int, out: list[str]) -> int:
    """Append the text of a double-quoted part from `i`; the index after it, or -1."""
    while i < len(source):
        c = source[i]
        if c == '"':
            return i + 1
        if c == "\\" and source[i + 1 : i + 2] in ("$", "`", '"', "\\", "\n"):
            out.append(source[i + 1].replace("\n", ""))
            i += 2
        else:
            out.append(c)
            i += 1
    return -1


def _ansi_unescape(body: str) -> str | None:
    def one(match: re.Match[str]) -> str:
        esc = match.group(1)
        if esc[0] in "xuU" and len(esc) > 1:
            return chr(int(esc[1:], 16))
        if esc[0] in "01234567":
            return chr(int(esc, 8) & 0xFF)
        if esc in _ESCAPES:
            return _ESCAPES[esc]
        if esc == "c":
            raise ValueError(esc)  # control characters: too rare to be worth decoding
        return "\\" + esc

    try:
        return _ANSI_ESCAPE.sub(one, body)
    except ValueError:
        return None


def skip_delimited(text: str, i: int, delim: str) -> int:
    """The index after the next unescaped `delim` from `i`; -1 if there is none."""
    if i < 0 or not delim or delim in "\\\n":
        return -1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == delim:
            return i + 1
        else:
            i += 1
    return -1
