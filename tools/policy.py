"""Which tool calls run at once, which ask a person first, and which never run.

The verdict is computed before anything happens, and again when a paused run resumes
(the tool node re-runs from its top), so it must be free of side effects. Each "ask"
carries a `rule_key`: the normalized action a person can allow forever.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ducklm.tools.workspace import PathError, is_within, relative_name, resolve_in_workspace

READ_ONLY_TOOLS = frozenset({"file_read", "list_dir", "search_files"})


@dataclass(frozen=True)
class Verdict:
    """What to do with one tool call before it runs."""

    action: Literal["allow", "ask", "deny"]
    reason: str
    rule_key: str | None = None
    """For "ask": the normalized action an `allow_forever` decision stores."""


ALLOW = Verdict("allow", "runs without asking")


def assess(
    name: str, args: dict[str, Any], workspace: Path, protected: Sequence[Path] = ()
) -> Verdict:
    """The verdict for calling tool `name` with `args`. Blocking (stat calls).

    Args:
        name: The tool.
        args: Its arguments, as the model gave them.
        workspace: The workspace of the run.
        protected: Folders whose files a write must never change unasked (DuckLM's own
            config and data dir, when they lie inside the workspace).
    """
    if name in READ_ONLY_TOOLS:
        return ALLOW
    if name == "file_write":
        return _assess_write(args, workspace, protected)
    return Verdict("ask", f"{name} is not known to the policy", rule_key=None)


def _assess_write(args: dict[str, Any], workspace: Path, protected: Sequence[Path]) -> Verdict:
    path = args.get("path")
    if not isinstance(path, str):
        return ALLOW  # the tool's own validation reports the bad argument
    try:
        target = resolve_in_workspace(workspace, path)
    except PathError:
        return ALLOW  # the tool refuses it with the reason; nothing to approve
    rel = relative_name(workspace, target)
    root = workspace.resolve()
    if is_within(root / ".git", target):
        return Verdict("ask", f"write into the git folder: {rel}", rule_key=f"write:{rel}")
    if any(is_within(p.resolve(), target) for p in protected):
        return Verdict("ask", f"write to DuckLM's own files: {rel}", rule_key=f"write:{rel}")
    if args.get("overwrite") and target.is_file():
        return Verdict("ask", f"overwrite existing file {rel}", rule_key=f"overwrite:{rel}")
    return ALLOW
