"""`ducklm llama ...`: the local model server, without opening DuckLM.

Like `serve`, these set `standalone_fn`: managing a process needs neither the database
nor the roles, and `ducklm llama start` must work before anything else does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ducklm.config.settings import Settings
from ducklm.models.local import server as llama
from ducklm.models.local.crash import last_ending, local_crash
from ducklm.models.local.exit_status import Ending

FOLLOW_POLL_S = 0.5
STATUS_LOG_LINES = 10


def add_llama_commands(sub: Any) -> None:
    """Add `llama start|stop|restart|status|logs|health` to the `ducklm` parser."""
    parser = sub.add_parser(
        "llama",
        help="start, stop and check the local model server",
        description="Manage a local llama.cpp server: DUCK_LLAMA_SERVER_BIN or llama-server "
        "on PATH, else llama-cpp-python's server (pip install '.[local]'). Model: "
        "DUCK_LLAMA_MODEL, default the bundled SmolLM2-135M-Instruct; port DUCK_LLAMA_PORT "
        "(8081). Its pid and log files are in the data dir.",
    )
    llama_sub = parser.add_subparsers(dest="llama_command", required=True, metavar="ACTION")
    start = llama_sub.add_parser("start", help="start it and wait until it answers")
    start.set_defaults(standalone_fn=cmd_start)
    stop = llama_sub.add_parser("stop", help="stop the server DuckLM started")
    stop.set_defaults(standalone_fn=cmd_stop)
    restart = llama_sub.add_parser("restart", help="stop it, then start it again")
    restart.set_defaults(standalone_fn=cmd_restart)
    status = llama_sub.add_parser("status", help="whether it runs, and where")
    status.add_argument("--json", action="store_true", help="one JSON object")
    status.set_defaults(standalone_fn=cmd_status)
    logs = llama_sub.add_parser("logs", help="show its log file")
    logs.add_argument("-n", "--lines", type=int, default=50, help="how many lines (50)")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new lines")
    logs.set_defaults(standalone_fn=cmd_logs)
    health = llama_sub.add_parser("health", help="whether it answers (exit 0) or not (1)")
    health.add_argument("--wait", type=float, default=0.0, help="seconds to wait for it")
    health.set_defaults(standalone_fn=cmd_health)


def say(line: str) -> None:
    """Progress for people, on stderr."""
    print(f"ducklm: {line}", file=sys.stderr, flush=True)


async def cmd_start(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm llama start`."""
    try:
        record, _ = await llama.start(settings, say)
    except llama.LocalServerFailed as exc:
        say(str(exc))
        return 1
    print(record.url)
    return 0


async def cmd_stop(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm llama stop`."""
    if await llama.stop(settings, say) is None:
        say("no local model server runs for this data dir")
    return 0


async def cmd_restart(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm llama restart`."""
    await llama.stop(settings, say)
    return await cmd_start(settings, args)


async def cmd_status(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm llama status`: 0 when it runs and answers, 1 otherwise.

    When it does not run, how it ended: `crashed (SIGILL) at <time>`, what to do, and
    the end of its log.
    """
    record = await llama.running(settings)
    ready = record is not None and await llama.answers(record.url, ready=True)
    ending = None if record is not None else await last_ending(settings)
    if args.json:
        shown = asdict(record) if record else {}
        crashed = ending is not None and ending.crashed
        ended = _ended_json(ending) if ending is not None else {}
        print(json.dumps({"running": record is not None, "ready": ready, "crashed": crashed,
                          **shown, **ended}))  # fmt: skip
    elif ending is not None:
        await _print_ending(settings, ending)
    elif record is None:
        print(f"not running (pid file {settings.files.llama_pid})")
    else:
        state = "ready" if ready else "loading or not answering"
        up = time.time() - record.started_at
        print(f"{state}: {record.kind}, pid {record.pid}, {record.url}, up {up:.0f} s")
        print(f"model {record.model}")
    return 0 if ready else 1


def _ended_json(ending: Ending) -> dict[str, object]:
    return {"ended": {**asdict(ending), "label": ending.label(), "fix": ending.advice()}}


async def _print_ending(settings: Settings, ending: Ending) -> None:
    if not ending.crashed:
        print(f"not running ({ending.label()} at {ending.when()})")
        return
    print(f"{ending.label()} at {ending.when()} (pid {ending.pid})")
    print(f"fix: {ending.advice()}")
    path = settings.files.llama_log
    print(f"the end of {path}:")
    for line in await asyncio.to_thread(llama.tail, path, STATUS_LOG_LINES):
        print(f"  | {line}")


async def cmd_logs(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm llama logs`."""
    path = settings.files.llama_log
    for line in await asyncio.to_thread(llama.tail, path, args.lines):
        print(line)
    if not args.follow:
        return 0
    offset = await asyncio.to_thread(_size, path)
    while True:
        await asyncio.sleep(FOLLOW_POLL_S)
        text, offset = await asyncio.to_thread(_read_from, path, offset)
        print(text, end="", flush=True)


async def cmd_health(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm llama health`: whether the local server's port answers `GET /v1/models`."""
    url = llama.server_url(settings.llama_port)
    deadline = time.monotonic() + args.wait
    while not await llama.answers(url, ready=True):
        if time.monotonic() >= deadline:
            ending = await local_crash(settings, url, wait_s=0)
            crash = f": {ending.label()} at {ending.when()}" if ending else ""
            print(f"not answering at {url}{crash}")
            return 1
        await asyncio.sleep(llama.POLL_S)
    print(f"ok: {url}")
    return 0


def _size(path: Path) -> int:
    try:
        return int(path.stat().st_size)
    except OSError:
        return 0


def _read_from(path: Path, offset: int) -> tuple[str, int]:
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except OSError:
        return "", offset
    return data.decode("utf-8", "replace"), offset + len(data)
