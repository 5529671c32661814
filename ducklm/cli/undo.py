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
        "changed files go back, created files go, deleted files return, byte for byte "
        "with their modes. By default the last turn's changes; an undo is itself a "
        "change, so undoing right after an undo redoes. Refused when a file was changed "
        "outside DuckLM since, unless --force.",
    )
    undo.add_argument("thread", help="the conversation id")
    which = undo.add_mutually_exclusive_group()
    which.add_argument("--to", metavar="CALL_ID", help="undo this tool call and all after it")
    which.add_argument("--turn", type=int, metavar="N", help="undo turn N (1 = first) and after")
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
        try:
            result = await undo.undo(
                args.thread, to_call=args.to, turn=args.turn, force=args.force, dry_run=args.dry_run
            )
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


def _show(summary: dict[str, Any]) -> None:
    if summary["diff"]:
        print(summary["diff"], end="" if summary["diff"].endswith("\n") else "\n")
    files = [f for f in summary["files"] if f["action"] != "unchanged"]
    calls = ", ".join(c["call_id"] or c["kind"] for c in summary["changes"])
    if summary["dry_run"]:
        print(f"dry run: undoing {calls} would change {len(files)} file(s); nothing changed")
        for outside in summary["changed_outside"]:
            print(f"changed outside DuckLM since (needs --force): {outside}")
        return
    for item in files:
        print(f"{item['action']}: {item['path']}")
    print(f"undid {calls} in {summary['workspace']} (undo id {summary['undo_id']})")
