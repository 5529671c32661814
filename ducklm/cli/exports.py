"""`ducklm export ID [--format md|jsonl] [-o FILE]` and `ducklm import FILE`.

Both go to the running server when there is one (`GET /v1/conversations/{id}/export`,
`POST /v1/conversations/import`), else open DuckLM in-process; either way the files are
made and read by `ducklm.runtime.exports`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ducklm.cli.exit_codes import EXIT_USAGE

if TYPE_CHECKING:
    from ducklm.cli.remote_client import DuckServer
    from ducklm.config.settings import Settings
    from ducklm.runtime.facade import DuckLM
    from ducklm.stores import Conversation

EXPORT_MODE = 0o600  # a conversation may hold what the person would not share


def add_export_commands(sub: Any) -> None:
    """Register `export` and `import` on `sub`."""
    export = sub.add_parser(
        "export",
        help="write a conversation as Markdown or JSONL (messages, tool calls, events)",
    )
    export.add_argument("thread", help="the conversation id (see `ducklm threads`)")
    export.add_argument("--format", choices=("md", "jsonl"), default="md", help="(md)")
    export.add_argument("-o", "--output", type=Path, help="the file to write (default: stdout)")
    export.set_defaults(command_fn=cmd_export, remote_fn=remote_export)
    importer = sub.add_parser(
        "import",
        help="read a JSONL export back as a new conversation (its tool calls are not run)",
    )
    importer.add_argument("file", type=Path, help="a file `ducklm export --format jsonl` wrote")
    importer.add_argument(
        "--workspace", help="an allowed workspace for it (default: DUCK_WORKSPACE)"
    )
    importer.set_defaults(command_fn=cmd_import, remote_fn=remote_import)


async def cmd_export(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm export` in-process."""
    from ducklm.runtime.exports import jsonl_export, markdown_export  # noqa: PLC0415

    conversation = await duck.conversations.get(args.thread)
    if conversation is None:
        raise LookupError(f"no conversation with id {args.thread!r}")
    write = markdown_export if args.format == "md" else jsonl_export
    exchanges = await duck.transcript(args.thread)
    text = await asyncio.to_thread(write, conversation, exchanges, time.time())
    return await _put(text, args.output)


async def remote_export(server: DuckServer, settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm export` through the running server."""
    path = f"/v1/conversations/{quote(args.thread, safe='')}/export"
    text = await server.text(path, params={"format": args.format})
    return await _put(text, args.output)


async def cmd_import(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm import` in-process."""
    from ducklm.kit.workspaces import requested_workspace  # noqa: PLC0415
    from ducklm.runtime.exports import BadImport, import_conversation, read_jsonl  # noqa: PLC0415

    text = await _read(args.file)
    if text is None:
        return EXIT_USAGE
    try:
        found = await asyncio.to_thread(read_jsonl, text)
    except BadImport as exc:
        print(f"ducklm: cannot import {args.file}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    workspace = await requested_workspace(duck.settings, args.workspace)
    _said(await import_conversation(duck, found, workspace=workspace))
    return 0


async def remote_import(server: DuckServer, settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm import` through the running server (a bad file: its 422, said in one line)."""
    text = await _read(args.file)
    if text is None:
        return EXIT_USAGE
    body = {"jsonl": text, "workspace": args.workspace}
    made = await server.call("POST", "/v1/conversations/import", json=body)
    print(f"imported {args.file} as conversation {made['id']}: {made['title']}")
    print(f"open it with `ducklm open {made['id']}` or `ducklm history {made['id']}`")
    return 0


def _said(conversation: Conversation) -> None:
    print(f"imported as conversation {conversation.id}: {conversation.title}")
    print(f"open it with `ducklm open {conversation.id}` or `ducklm history {conversation.id}`")


async def _read(path: Path) -> str | None:
    try:
        return await asyncio.to_thread(path.read_text, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"ducklm: cannot read {path}: {exc}", file=sys.stderr)
        return None


async def _put(text: str, output: Path | None) -> int:
    if output is None:
        sys.stdout.write(text)
        return 0
    try:
        await asyncio.to_thread(_write, output, text)
    except OSError as exc:
        print(f"ducklm: cannot write {output}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {output}", file=sys.stderr)
    return 0


def _write(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, EXPORT_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
