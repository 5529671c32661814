"""A JSON reply cut at the output limit, closed where it was cut.

On llama-server the bundled model's critic and memory policy wrote strings that repeat
("your role, your title, your role, ...") until `max_tokens`, and the reply was lost
(`LengthFinishReasonError`). What came before the cut is mostly a good reply: here the
string being written is ended where its repetition began (or where it was cut), a member
left without its value is dropped, and the open objects and arrays are closed. The
caller validates the result as it would any reply (`ducklm.turn.prompting.structured`).

Everything here is pure.
"""

from __future__ import annotations

import json
from typing import Any

REPEAT_WORDS = 4
"""A run of this many words said before marks where a string began to repeat itself."""
CLOSERS = {"{": "}", "[": "]"}


def close_cut_json(text: str) -> Any | None:
    """The JSON value `text` began, closed where it was cut; `None` when nothing can be read."""
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    body = text[start:]
    closed = _closed(body)
    if closed is None:
        return None
    try:
        return json.loads(closed, strict=False)
    except json.JSONDecodeError:
        return None


def _closed(body: str) -> str | None:  # noqa: PLR0912  one branch per kind of character
    """`body` ended at its last complete member, or with its open string ended, and closed."""
    stack: list[str] = []
    expect_key: list[bool] = []  # per open object: the next string is a key
    safe = (0, "")  # (end of the text kept, closers for it)
    in_string, escaped, string_start, is_key = False, False, 0, False
    for i, ch in enumerate(body):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                if not is_key:
                    safe = (i + 1, _closers(stack))
            continue
        if ch == '"':
            in_string, string_start = True, i
            is_key = bool(stack) and stack[-1] == "{" and expect_key[-1]
        elif ch in "{[":
            stack.append(ch)
            expect_key.append(ch == "{")
            safe = (i + 1, _closers(stack))
        elif ch in "}]":
            if not stack:
                return None
            stack.pop()
            expect_key.pop()
            safe = (i + 1, _closers(stack))
            if not stack:
                return body[: i + 1]
        elif ch == ",":
            safe = (i, _closers(stack))
            if stack and stack[-1] == "{":
                expect_key[-1] = True
        elif ch == ":" and stack and stack[-1] == "{":
            expect_key[-1] = False
    if in_string and not is_key:
        # Cut inside a value: the string ends where it began to repeat, or where it was cut.
        kept = _unrepeated(_decoded(body[string_start + 1 :].rstrip("\\")))
        return body[:string_start] + json.dumps(kept) + _closers(stack)
    whole = body.rstrip().rstrip(",") + _closers(stack)  # cut right after a number, say
    if not in_string and _parses(whole):
        return whole
    end, closers = safe
    return body[:end].rstrip().rstrip(",") + closers if end else None


def _parses(text: str) -> bool:
    try:
        json.loads(text, strict=False)
    except json.JSONDecodeError:
        return False
    return True


def _decoded(raw: str) -> str:
    """A JSON string's raw text read as JSON reads it (escapes and all), else as it is."""
    try:
        return str(json.loads(f'"{raw}"', strict=False))
    except json.JSONDecodeError:
        return raw


def _closers(stack: list[str]) -> str:
    return "".join(CLOSERS[c] for c in reversed(stack))


def _unrepeated(text: str) -> str:
    """`text` up to where a run of `REPEAT_WORDS` words comes again; a cut word dropped."""
    words = text.split(" ")
    seen: set[tuple[str, ...]] = set()
    for i in range(len(words) - REPEAT_WORDS + 1):
        run = tuple(w.strip(",.;").lower() for w in words[i : i + REPEAT_WORDS])
        if run in seen:
            return " ".join(words[:i]).rstrip(" ,;")
        seen.add(run)
    return " ".join(words[:-1]) if len(words) > 1 else text
