"""Operator commands: `threads`, `events`, `history`, `replay`, `prune`, `models ping`.

Everything but `replay` opens only DuckLM's SQLite files (`ducklm.runtime.operator`), so
it works beside a running server or chat without loading a model. The stores and the
runtime are imported by the commands that use them: `import ducklm.cli.main` (which builds
this parser) must stay light for the commands that go to a running server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from contextlib import AsyncExitStack
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ducklm.cli.prune import add_prune_commands

if TYPE_CHECKING:
    from ducklm.config.settings import Settings
    from ducklm.runtime.states import StateReader

FOLLOW_POLL_S = 0.5
WAITING_HINT = "task {task} waits for an answer: ducklm resume {thread} ..."


def add_ops_commands(sub: Any) -> None:
    """Register the operator subcommands on `sub`."""
    threads = sub.add_parser(
        "threads", help="list conversations: title, last task's status, last update"
    )
    threads.add_argument("--limit", type=int, default=50, help="at most this many (newest)")
    threads.add_argument("--json", action="store_true", help="one JSON object per line")
    threads.set_defaults(standalone_fn=cmd_threads)

    events = sub.add_parser(
        "events", help="show the audit log of a thread (every event but tokens)"
    )
    events.add_argument("thread", help="the conversation id (see `ducklm threads`)")
    events.add_argument(
        "--follow", "-f", action="store_true",
        help="keep printing new events until the thread's open task ends (Ctrl-C stops)",
    )  # fmt: skip
    events.add_argument("--json", action="store_true", help="one JSON object per line")
    events.set_defaults(standalone_fn=cmd_events)

    history = sub.add_parser(
        "history",
        help="show a thread as it happened (stopped answers, failed turns, how each call "
        "was decided), its messages (--json), or its checkpoints",
    )
    history.add_argument("thread", help="the conversation id (see `ducklm threads`)")
    history.add_argument(
        "--checkpoints", action="store_true",
        help="list checkpoints instead (id, step, source, node, time): the ids replay takes",
    )  # fmt: skip
    history.add_argument("--limit", type=int, default=50, help="with --checkpoints: the newest N")
    history.add_argument("--json", action="store_true", help="one JSON object per line")
    history.set_defaults(standalone_fn=cmd_history)

    replay = sub.add_parser(
        "replay",
        help="run a thread again from an earlier checkpoint, as a fork (the old branch stays)",
    )
    replay.add_argument("thread", help="the conversation id")
    replay.add_argument(
        "--checkpoint", help="checkpoint id from `ducklm history THREAD --checkpoints` "
        "(default: the start of the last turn)",
    )  # fmt: skip
    replay.add_argument("--json", action="store_true", help="print events as JSON lines")
    replay.add_argument("--no-critic", action="store_true", help="skip the critic this run")
    replay.add_argument("--no-memory", action="store_true", help="skip the memory policy")
    replay.set_defaults(standalone_fn=cmd_replay)
    add_prune_commands(sub)


async def cmd_threads(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm threads`."""
    from ducklm.runtime.operator import open_operator_stores  # noqa: PLC0415  see module doc

    async with open_operator_stores(settings) as stores:
        for conversation in await stores.conversations.list(limit=args.limit):
            task = await stores.tasks.latest(conversation.id)
            row = {
                **asdict(conversation),
                "last_task": None if task is None else {
                    "task_id": task.task_id, "status": task.status, "error": task.error,
                },
            }  # fmt: skip
            if args.json:
                print(json.dumps(row, ensure_ascii=False))
            else:
                status = task.status if task else "-"
                when = _when(conversation.updated_at)
                print(f"{conversation.id}  {when}  {status:<11}  {conversation.title}")
    return 0


async def cmd_events(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm events [--follow]`."""
    from ducklm.runtime.operator import open_operator_stores  # noqa: PLC0415  see module doc

    async with open_operator_stores(settings) as stores:
        after, hinted = 0, False
        while True:
            task = await stores.tasks.latest(args.thread)
            for record in await stores.audit.list(args.thread, after=after):
                _print_event(record.seq, record.type, record.run_id, record.data, args.json)
                after = record.seq
            if not args.follow or task is None or not task.is_open:
                return 0
            if task.status == "interrupted" and not hinted:
                hint = WAITING_HINT.format(task=task.task_id, thread=args.thread)
                print(hint, file=sys.stderr, flush=True)
                hinted = True
            await asyncio.sleep(FOLLOW_POLL_S)


async def cmd_history(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm history [--checkpoints]`."""
    from ducklm.runtime.operator import open_history  # noqa: PLC0415  see module doc

    async with open_history(settings) as states:
        if not args.checkpoints:
            messages = (await states.snapshot(args.thread)).values.get("messages", [])
            if args.json:
                for message in messages:
                    print(json.dumps(message.model_dump(mode="json"), ensure_ascii=False))
            else:
                await _print_transcript(settings, states, args.thread, messages)
            return 0
        snapshots = await states.history(args.thread, limit=args.limit)
        for index, snapshot in enumerate(snapshots):
            # The nodes that wrote a checkpoint are the ones its parent was waiting for.
            parent = snapshots[index + 1] if index + 1 < len(snapshots) else None
            row = {
                "checkpoint_id": snapshot.config["configurable"]["checkpoint_id"],
                "step": snapshot.metadata.get("step") if snapshot.metadata else None,
                "source": snapshot.metadata.get("source") if snapshot.metadata else None,
                "node": list(parent.next) if parent else [],
                "next": list(snapshot.next),
                "created_at": snapshot.created_at,
            }
            _print_checkpoint(row, args.json)
    return 0


async def _print_transcript(
    settings: Settings, states: StateReader, thread: str, messages: list[Any]
) -> None:
    """The conversation as it happened on the branch shown: what the web chat shows, in text."""
    from ducklm.runtime.branches import Branches  # noqa: PLC0415  see module doc
    from ducklm.runtime.operator import open_operator_stores  # noqa: PLC0415  see module doc
    from ducklm.runtime.transcript import read_transcript, transcript_lines  # noqa: PLC0415

    async with open_operator_stores(settings) as stores:
        # A regenerated or edited message's other versions answered on other branches.
        hidden = await Branches(states.graph, stores.runs).off_branch_tasks(thread)
        exchanges = await read_transcript(stores, thread, messages, hidden=hidden)
    for line in transcript_lines(exchanges):
        print(line)


async def cmd_replay(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm replay`."""
    from ducklm.cli.console import ConsolePrinter, print_run  # noqa: PLC0415  see module doc
    from ducklm.runtime.facade import DuckLM  # noqa: PLC0415
    from ducklm.runtime.operator import notice_if_slow  # noqa: PLC0415

    async with AsyncExitStack() as stack:
        async with notice_if_slow("opening DuckLM (loading the embedding model)..."):
            duck = await stack.enter_async_context(DuckLM.open(settings))
        stream = duck.replay(
            args.thread, args.checkpoint, critic=not args.no_critic, memory=not args.no_memory
        )
        return await print_run(stream, ConsolePrinter(as_json=args.json))


def _print_event(
    seq: int, type_: str, run_id: str | None, data: dict[str, Any], as_json: bool
) -> None:
    if as_json:
        print(json.dumps({**data, "seq": seq}, default=str, ensure_ascii=False), flush=True)
        return
    extra = data.get("reason") or data.get("status") or data.get("tool") or ""
    print(f"{seq:>5} {type_:<22} run {run_id}  {extra}".rstrip(), flush=True)


def _print_checkpoint(row: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(row))
        return
    node = ",".join(row["node"]) or row["source"]
    after = ",".join(row["next"]) or "(end)"
    step = row["step"] if row["step"] is not None else "?"
    print(f"{row['checkpoint_id']}  step {step:>4}  {node:<18} -> {after:<18} {row['created_at']}")


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))
