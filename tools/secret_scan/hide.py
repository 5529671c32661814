"""Each secret in a tool result becomes a marker that says what was hidden and where.

`[secret hidden: AWS secret key, .aws/credentials line 3]`: the kind comes from the
detector (`formats.py`, `keywords.py`); the place is the file and line when the text
says them (a `grep -n` or `search_files` line `path:12: ...`, a diff's `+++ b/path` and
hunk), else the file the tool read (`source`), else the line of the output.
"""

from __future__ import annotations

import asyncio
import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from itertools import chain
from typing import Any, TypeVar

from ducklm.tools.secret_scan.formats import detectors, find_formats
from ducklm.tools.secret_scan.found import Found
from ducklm.tools.secret_scan.keywords import find_assigned
from ducklm.tools.secret_scan.keywords import load as load_keywords

T = TypeVar("T")
MARKER = "[secret hidden: {kind}, {place}]"
MAX_SCAN_CHARS = 400_000
"""Above this a text is cut (head and tail kept) before it is scanned: every tool's own
cap lies below it (a file read 200,000 chars, a command's output 64 KiB)."""
SCAN_CUT = "\n[... {n} chars cut before the secret scan ...]\n"
INLINE_CHARS = 2_000
"""A text up to this long is scanned on the event loop (well under a millisecond)."""

_GREP_LINE = re.compile(r"(?P<file>[^\s:][^:\n]*):(?P<line>\d+)[:-]")
# A diff's file, or what ends the last one (the next commit of `git log -p`, a new file).
_DIFF_FILE = re.compile(
    r"^(?:\+\+\+ (?:b/)?(?P<file>.+?)\s*|commit [0-9a-f]{7,64}\b.*|diff .*)$", re.M
)
_NEWLINE = re.compile("\n")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(?P<line>\d+)(?:,\d+)? @@", re.M)


@dataclass(frozen=True)
class Hidden:
    """A text with its secrets replaced by markers, and what each marker hid."""

    text: str
    markers: tuple[str, ...] = field(default=())
    """Each marker put in, in order (`kind, place` inside the brackets)."""


def hide_secrets(text: str, *, source: str | None = None) -> Hidden:
    """`text` with every secret found in it replaced by a marker. Blocking (CPU only).

    Args:
        text: A tool's result, as the model would read it.
        source: The file the text was read from, for the markers' places.
    """
    if len(text) > MAX_SCAN_CHARS:
        head = MAX_SCAN_CHARS // 2
        cut = SCAN_CUT.format(n=len(text) - MAX_SCAN_CHARS)
        text = text[:head] + cut + text[-(MAX_SCAN_CHARS - head) :]
    found = _merged(chain(find_formats(text), find_assigned(text)))
    if not found:
        return Hidden(text)
    places = _Places(text, source)
    parts, markers, at = [], [], 0
    for item in found:
        marker = MARKER.format(kind=item.kind, place=places.of(item.start))
        parts += [text[at : item.start], marker]
        markers.append(marker)
        at = item.end
    parts.append(text[at:])
    return Hidden("".join(parts), tuple(markers))


async def hide_secrets_async(text: str, *, source: str | None = None) -> Hidden:
    """`hide_secrets`, on a worker thread unless the text is short and all is loaded."""
    if load.cache_info().currsize and len(text) <= INLINE_CHARS:
        return hide_secrets(text, source=source)
    return await asyncio.to_thread(_loaded, hide_secrets, text, source=source)


async def hide_in_values_async(value: Any) -> Any:
    """`hide_in_values`, on a worker thread unless its text is short and all is loaded."""
    size = text_size(value)
    if size == 0:
        return value
    if load.cache_info().currsize and size <= INLINE_CHARS:
        return hide_in_values(value)
    return await asyncio.to_thread(_loaded, hide_in_values, value)


@cache
def load() -> None:
    """Import detect-secrets and build every pattern (~0.2 s, once). Blocking."""
    detectors()
    load_keywords()


def _loaded(work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    load()
    return work(*args, **kwargs)


def hide_in_values(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, strings) with the secrets in its strings hidden."""
    if isinstance(value, str):
        return hide_secrets(value).text
    if isinstance(value, dict):
        return {key: hide_in_values(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [hide_in_values(item) for item in value]
    return value


def text_size(value: Any) -> int:
    """How many characters the strings in `value` (JSON-like) hold."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(text_size(item) for item in value.values())
    if isinstance(value, list | tuple):
        return sum(text_size(item) for item in value)
    return 0


def _merged(found: chain[Found]) -> list[Found]:
    """The spans in order, overlapping ones joined (the one that starts first names it)."""
    merged: list[Found] = []
    for item in sorted(found, key=lambda f: (f.start, -f.end)):
        if item.end <= item.start:
            continue
        if merged and item.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = Found(last.start, max(last.end, item.end), last.kind)
        else:
            merged.append(item)
    return merged


class _Places:
    """Where an offset of the text lies, as a person would look it up."""

    def __init__(self, text: str, source: str | None) -> None:
        self.text = text
        self.source = source
        self.lines = [m.start() for m in _NEWLINE.finditer(text)]
        diffs = [(m.start(), m.group("file")) for m in _DIFF_FILE.finditer(text)]
        self.diff_at, self.diff_files = [at for at, _ in diffs], [f for _, f in diffs]
        hunks = [(m.start(), int(m.group("line"))) for m in _HUNK.finditer(text)]
        self.hunk_at, self.hunk_lines = [at for at, _ in hunks], [n for _, n in hunks]

    def of(self, offset: int) -> str:
        number = bisect.bisect_left(self.lines, offset) + 1
        start = self.lines[number - 2] + 1 if number > 1 else 0
        if (grep := _GREP_LINE.match(self.text, start)) is not None:
            return f"{grep.group('file')} line {grep.group('line')}"
        if (in_diff := self._in_diff(offset, number)) is not None:
            return in_diff
        if self.source:
            return f"{self.source} line {number}"
        return f"output line {number}"

    def _in_diff(self, offset: int, number: int) -> str | None:
        """`path line N` for a line of a unified diff's hunk (`git log -p`, `git show`)."""
        diff = bisect.bisect_right(self.diff_at, offset) - 1
        hunk = bisect.bisect_right(self.hunk_at, offset) - 1
        if diff < 0 or hunk < 0 or self.hunk_at[hunk] < self.diff_at[diff]:
            return None
        path = self.diff_files[diff]
        if path is None:
            return None
        hunk_at, first = self.hunk_at[hunk], self.hunk_lines[hunk]
        hunk_line = bisect.bisect_left(self.lines, hunk_at) + 1
        # Lines of the new file: every line after the hunk header but the removed ones.
        removed = sum(
            1
            for n in range(hunk_line + 1, number)
            if self.text[self.lines[n - 2] + 1 : self.lines[n - 2] + 2] == "-"
        )
        return f"{path} line {first + number - hunk_line - 1 - removed}"
