"""`ducklm prune` (old checkpoints) and `ducklm models ping` (each role's model)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import asdict
from typing import Any

from ducklm.config.settings import Settings
from ducklm.models.roles import load_roles


def add_prune_commands(sub: Any) -> None:
    """Register `prune` and `models ping` on `sub`."""
    pruning = sub.add_parser(
        "prune",
        help="delete old checkpoints (never the ones a thread still needs); shows the size",
        description="Delete old checkpoints from data/checkpoints.sqlite (or the "
        "DUCK_DATABASE_URL database). The latest "
        "checkpoint of every thread, the ones its messages are rebuilt from, and threads "
        "with a running task are always kept. Give --keep-last, --older-than or both.",
    )
    pruning.add_argument("--keep-last", type=int, metavar="N", help="keep the newest N per thread")
    pruning.add_argument(
        "--older-than", type=float, metavar="DAYS", help="delete only checkpoints older than this"
    )
    pruning.add_argument(
        "--dry-run", action="store_true", help="count what would go; delete nothing"
    )
    pruning.add_argument("--json", action="store_true", help="the report as one JSON object")
    pruning.set_defaults(standalone_fn=cmd_prune)

    models = sub.add_parser("models", help="check the model of each role")
    msub = models.add_subparsers(dest="models_command", required=True, metavar="COMMAND")
    ping = msub.add_parser(
        "ping", help="ask each role's server for its models: reachable, and serving the model?"
    )
    ping.add_argument("--json", action="store_true", help="one JSON object per line")
    ping.set_defaults(standalone_fn=cmd_models_ping)


async def cmd_prune(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm prune`."""
    # Imported here: `import ducklm.cli.main` builds this parser and must not load the graph.
    from ducklm.stores.prune import PrunePolicy, prune_configured  # noqa: PLC0415

    if args.keep_last is None and args.older_than is None:
        print("ducklm: give --keep-last N, --older-than DAYS, or both", file=sys.stderr)
        return 2
    if (args.keep_last is not None and args.keep_last < 1) or (args.older_than or 0) < 0:
        print("ducklm: --keep-last must be 1 or more, --older-than 0 or more", file=sys.stderr)
        return 2
    policy = PrunePolicy(args.keep_last or 1, args.older_than)

    def progress(step: str) -> None:
        print(f"{step}...", file=sys.stderr, flush=True)

    report = await prune_configured(settings, policy, dry_run=args.dry_run, progress=progress)
    if args.json:
        print(json.dumps(asdict(report)))
        return 0
    verb = "would delete" if report.dry_run else "deleted"
    print(
        f"{verb} {report.deleted} of {report.checkpoints} checkpoints in {report.threads} threads"
    )
    if report.kept_for_state:
        print(
            f"kept {report.kept_for_state} old checkpoints their thread's messages are built from"
        )
    for thread_id in report.skipped_threads:
        print(f"skipped thread {thread_id}: a task is running")
    where = "PostgreSQL database" if settings.database_url else "checkpoints.sqlite"
    print(f"{where}: {_mb(report.size_before)} before, {_mb(report.size_after)} after")
    if report.deleted and not report.dry_run and not report.vacuumed and not settings.database_url:
        print("VACUUM skipped (the file is busy): the freed space is reused, not returned")
    return 0


async def cmd_models_ping(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm models ping`."""
    from ducklm.cli.doctor import check_models  # noqa: PLC0415  it imports the runtime

    roles = await asyncio.to_thread(
        load_roles,
        settings.models_config,
        base_url=settings.llm_base_url,
        api_key=settings.llm_api_key,
    )
    checks = await check_models(roles)
    for check in checks:
        if args.json:
            print(json.dumps(asdict(check)))
        else:
            print(f"[{'ok  ' if check.ok else 'FAIL'}] {check.name}: {check.detail}")
            if not check.ok and check.fix:
                print(f"       fix: {check.fix}")
    return 0 if all(c.ok for c in checks) else 1


def _mb(size: int) -> str:
    return f"{size / 1_048_576:.2f} MB"
