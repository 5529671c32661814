"""What an overwriting `file_write` changes, for its question: the diff the person decides on.

The coder tools already ask with their proposal's diff; a plain `file_write` onto an
existing file asks the same way, so the person sees the change, not a description of it.
Read on a file thread with the file tools' deadline, since a question is planned again
each time the paused step resumes.
"""

from __future__ import annotations

from pathlib import Path

from ducklm.tools.errors import ToolError
from ducklm.tools.file_threads import run_file_work
from ducklm.tools.files import read_file_text
from ducklm.tools.workspace import relative_name, resolve_in_workspace
from ducklm.turn.coding.coder import unified_diff

MAX_DIFF_CHARS = 20_000
"""A longer diff is cut (the question is checkpointed, and a card is not a file viewer)."""
DIFF_CUT = "\\ ... {n} more lines of the diff not shown\n"
NO_DIFF = "(no diff shown: {problem})"


async def overwrite_diff(
    workspace: Path, path: str, content: object, timeout_s: float | None
) -> str:
    """The unified diff writing `content` over the file `path` makes, or why none is shown.

    "" when the file already holds `content`: the write changes nothing.
    """
    if not isinstance(content, str):
        return NO_DIFF.format(problem="the content is not text")
    try:
        return await run_file_work("file_write", timeout_s, _diff, workspace, path, content)
    except ToolError as exc:  # PathError too
        return NO_DIFF.format(problem=exc)


def _diff(workspace: Path, path: str, content: str) -> str:
    """Blocking: read the file as it is (line endings kept) and diff `content` against it."""
    target = resolve_in_workspace(workspace, path)
    rel = relative_name(workspace, target)
    old = read_file_text(workspace, target, shown=rel, newline="")
    return _clipped(unified_diff(rel, old, content))


def _clipped(diff: str) -> str:
    if len(diff) <= MAX_DIFF_CHARS:
        return diff
    kept = diff[:MAX_DIFF_CHARS].rsplit("\n", 1)[0] + "\n"
    return kept + DIFF_CUT.format(n=diff.count("\n") - kept.count("\n"))
