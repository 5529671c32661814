"""`ducklm undo THREAD`: roll back what DuckLM changed in the workspace.

It opens only DuckLM's tables and the shadow repository (like the operator commands),
so it works beside a running server or chat and starts without the models.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ducklm.cli.exit_codes import EXIT_FAILED, EXIT_USAGE
from ducklm.config.settings import Settings


def add_undo_command(sub: Any) -> None:
    """Register `undo` on `sub`."""
    undo = sub.add_parser(
        "undo",
        help="roll back the files DuckLM changed in a conversation (shows the diff)",
        description="Restore the workspace files a conversation's tool calls changed: "
        "changed files go back, created files and folders go, deleted ones return, byte "
        "for byte with their modes. By default the last turn's changes; an undo is "
        "itself a change, so undoing right after an undo redoes. Only the changes named "
        "are undone, never a later one: refused when a file was changed since, by a "
        "later change or outside DuckLM, unless --force.",
    )
    undo.add_argument("thread", help="the conversation id")
    which = undo.add_mutually_exclusive_group()
    which.add_argument("--to", metavar="CALL_ID", help="undo this tool call (or upload) alone")
    which.add_argument("--turn", type=int, metavar="N", help="undo turn N (1 = first) alone")
    which.add_argument("--turn-of", metavar="CALL_ID", help="undo the turn of this tool call")
    which.add_argument(
        "--list", action="store_true", help="list the recorded changes and which are reverted"
    )
    undo.add_argument("--dry-run", action="store_true", help="show the diff; change nothing")
    undo.add_argument("--force", action="store_true", help="undo even over outside changes")
    undo.add_argument("--json", action="store_true", help="the result as one JSON object")
    undo.set_defaults(standalone_fn=cmd_undo)


async def cmd_undo(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm undo`."""
    # Imported here: `import ducklm.cli.main` builds this parser and must not load the graph.
    from ducklm.runtime.operator import open_operator_stores  # noqa: PLC0415
    from ducklm.undo import UndoError, UndoRefused  # noqa: PLC0415
    from ducklm.undo.service import UNDO_OFF, open_undo  # noqa: PLC0415

    async with open_operator_stores(settings) as stores:
        undo = open_undo(settings, stores)
        if undo is None:
            print(f"ducklm: {UNDO_OFF}", file=sys.stderr)
            return EXIT_USAGE
        if args.list:
            history = await undo.history(args.thread)
            print(json.dumps(history) if args.json else _listing(history))
            return 0
        try:
            result = await undo.undo(
                args.thread, to_call=args.to, turn=args.turn, turn_of=args.turn_of,
                force=args.force, dry_run=args.dry_run,
            )  # fmt: skip
        except (UndoRefused, LookupError) as exc:  # changed outside since; nothing to undo
            print(f"ducklm: {exc}", file=sys.stderr)
            return EXIT_USAGE
        except UndoError as exc:
            print(f"ducklm: {exc}", file=sys.stderr)
            return EXIT_FAILED
    summary = result.summary()
    if args.json:
        print(json.dumps(summary))
        return 0
    _show(summary)
    return 0


def _listing(history: list[dict[str, Any]]) -> str:
    """One line per change: its id, what made it, how many paths, and whether reverted."""
    if not history:
        return "no recorded change"
    lines = []
    for change in history:
        who = change["call_id"] or change["kind"]
        if change["kind"] == "undo":
            who = f"undo of {', '.join(change['undoes'] or [])}"
        state = f"reverted by {change['reverted_by']}" if change["reverted_by"] else "live"
        lines.append(f"{change['id']}  {who}  {change['changed_count']} path(s)  {state}")
    return "\n".join(lines)


def _show(summary: dict[str, Any]) -> None:
    if summary["diff"]:
        print(summary["diff"], end="" if summary["diff"].endswith("\n") else "\n")
    files = [f for f in summary["files"] if f["action"] != "unchanged"]
    calls = ", ".join(c["call_id"] or c["kind"] for c in summary["changes"])
    if summary["dry_run"]:
        print(f"dry run: undoing {calls} would change {len(files)} file(s); nothing changed")
        for outside in summary["changed_outside"]:
            print(f"changed outside DuckLM since (needs --force): {outside}")
        for later in summary["changed_later"]:
            print(f"changed again later by {later['call_id']} (needs --force): "
                  f"{', '.join(later['paths'])}")  # fmt: skip
        return
    for item in files:
        print(f"{item['action']}: {item['path']}")
    print(f"undid {calls} in {summary['workspace']} (undo id {summary['undo_id']})")
