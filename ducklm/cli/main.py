"""The `ducklm` command.

Exit codes: 0 the run completed, 3 it is waiting for a decision, 1 it failed, 2 the
command itself was wrong (bad settings, bad arguments, nothing to resume).

When a `ducklm serve` runs on the same data dir, the conversation and memory commands
go to it over HTTP (`ducklm.cli.remote_client`); otherwise they open DuckLM in-process. This
module imports neither the runtime nor the graph at the top: a command sent to the
server starts without LangGraph, LangChain or torch.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ducklm.cli.chat import cmd_chat, cmd_password, cmd_resume
from ducklm.cli.console import EXIT_CODES
from ducklm.cli.exit_codes import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE
from ducklm.cli.exports import add_export_commands
from ducklm.cli.learning import add_learning_commands
from ducklm.cli.llama import add_llama_commands
from ducklm.cli.mcp import add_mcp_commands
from ducklm.cli.ops import add_ops_commands
from ducklm.cli.remote import over_http
from ducklm.cli.remote_client import ServerFailed, ServerRefused, connect
from ducklm.cli.search import add_search_command
from ducklm.cli.server import add_server_commands
from ducklm.cli.undo import add_undo_command
from ducklm.config.settings import Settings, SettingsError, load_settings
from ducklm.mcp.config import McpConfigError
from ducklm.mcp.errors import TypedInputError
from ducklm.runtime.logs import start_file_logging
from ducklm.tools.hitl import DECISION_TYPES, DecisionError

if TYPE_CHECKING:
    from ducklm.runtime.facade import DuckLM

    Command = Callable[[DuckLM, argparse.Namespace], Coroutine[Any, Any, int]]

__all__ = ["EXIT_CODES", "build_parser", "main"]
# The command was wrong: said in one line, exit code 2. The in-process path's own
# errors are in `_in_process_user_errors`.
USER_ERRORS = (
    SettingsError,
    DecisionError,
    LookupError,
    ServerRefused,
    McpConfigError,
    TypedInputError,
)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `ducklm` command."""
    args = build_parser().parse_args(argv)
    try:
        return asyncio.run(_dispatch(args))
    except USER_ERRORS as exc:
        print(f"ducklm: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ServerFailed as exc:
        print(f"ducklm: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as exc:
        if not isinstance(exc, _in_process_user_errors()):
            raise
        print(f"ducklm: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _in_process_user_errors() -> tuple[type[Exception], ...]:
    """User errors raised by the in-process runtime.

    Imported only once something failed: they live in heavy modules (the runtime, the
    memory store), and a command that went to the server must not load them to start.
    """
    from ducklm.learning.skill_proposals import ProposalError  # noqa: PLC0415
    from ducklm.memory import MemoryNotFound  # noqa: PLC0415
    from ducklm.models.prompts import PromptError  # noqa: PLC0415
    from ducklm.models.roles import ModelsConfigError  # noqa: PLC0415
    from ducklm.runtime.facade import NotWaitingError  # noqa: PLC0415
    from ducklm.runtime.model_choice import (  # noqa: PLC0415
        ModelsUnavailableError,
        UnknownModelError,
    )
    from ducklm.stores import DatabaseUnavailable, ThreadRunning  # noqa: PLC0415

    return (
        ModelsConfigError,
        PromptError,
        NotWaitingError,
        UnknownModelError,  # `ducklm chat --model` names one the server does not offer
        ModelsUnavailableError,
        ProposalError,
        MemoryNotFound,
        ThreadRunning,  # another process (a server beside this CLI) runs the thread
        DatabaseUnavailable,  # DUCK_DATABASE_URL names a server that does not answer
    )


async def _dispatch(args: argparse.Namespace) -> int:
    settings = await asyncio.to_thread(load_settings)
    listener = await asyncio.to_thread(start_file_logging, settings.data_dir)
    try:
        if hasattr(args, "standalone_fn"):
            code: int = await args.standalone_fn(settings, args)
            return code
        sent = await _through_server(settings, args)
        if sent is not None:
            return sent
        return await _run_in_process(args.command_fn, settings, args)
    finally:
        await asyncio.to_thread(listener.stop)


async def _through_server(settings: Settings, args: argparse.Namespace) -> int | None:
    """The command's exit code from the server on this data dir; `None`: run in-process.

    `None` when the command has no HTTP form, no server answers (no `server.json`, a
    dead pid, no `/health`), or the command's form needs the in-process path.
    """
    remote_fn = getattr(args, "remote_fn", None)
    if remote_fn is None:
        return None
    async with connect(settings) as server:
        if server is None:
            return None
        code: int | None = await remote_fn(server, settings, args)
        return code


async def _run_in_process(command: Command, settings: Settings, args: argparse.Namespace) -> int:
    # The graph, LangChain and the embedding model load here, and only here.
    from ducklm.graph.dependencies import NO_SANDBOX  # noqa: PLC0415
    from ducklm.runtime.facade import DuckLM  # noqa: PLC0415

    async with DuckLM.open(settings) as duck:
        if duck.context.protection == "none" and command is not cmd_doctor:
            print(f"ducklm: warning: {NO_SANDBOX}", file=sys.stderr)
        return await command(duck, args)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="ducklm",
        description="DuckLM: a local agent over your own models. Settings come from DUCK_* "
        "environment variables and .env (see README).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    chat = sub.add_parser("chat", help="send a message (or chat interactively without one)")
    chat.add_argument("message", nargs="?", help="the message; omit it for an interactive chat")
    chat.add_argument("--thread", help="conversation id to continue (default: a new one)")
    chat.add_argument(
        "--model",
        help="answer with this model of the configured server (see GET /v1/models/server); "
        "kept for the conversation's later turns",
    )
    _add_run_flags(chat)
    chat.set_defaults(command_fn=cmd_chat, remote_fn=over_http(cmd_chat))

    resume = sub.add_parser("resume", help="answer the approval a thread is waiting for")
    resume.add_argument("thread", help="the conversation id printed when the run paused")
    resume.add_argument(
        "--decision",
        choices=DECISION_TYPES,
        help="the answer to the approval; without it, go on with a run the process left "
        "unfinished (a command that had started is reported, not run again)",
    )
    resume.add_argument("--args", help="with --decision edit: the new arguments as JSON")
    resume.add_argument("--message", help="with --decision reject: a note for the model")
    resume.add_argument(
        "--elicit",
        metavar="ANSWER",
        help="the answer to an MCP server's question: accept, decline, cancel, or the "
        "form's content as a JSON object (accepted; fields left out take their defaults)",
    )
    _add_run_flags(resume)
    resume.set_defaults(command_fn=cmd_resume, remote_fn=over_http(cmd_resume))

    password = sub.add_parser("password", help="give the sudo password a thread waits for")
    password.add_argument("thread")
    password.add_argument("--cancel", action="store_true", help="refuse: the command won't run")
    _add_run_flags(password)
    password.set_defaults(command_fn=cmd_password, remote_fn=over_http(cmd_password))

    doctor = sub.add_parser(
        "doctor",
        help="check the sandbox, model servers, each role's model, the embedding model, "
        "Qdrant, the data dir and each MCP server (the revision agreed), and say what to do "
        "about each problem",
    )
    doctor.add_argument("--json", action="store_true")
    doctor.set_defaults(command_fn=cmd_doctor)

    approvals = sub.add_parser("approvals", help="list or revoke allow-forever rules")
    approvals_sub = approvals.add_subparsers(dest="approvals_command", required=True)
    listing = approvals_sub.add_parser("list", help="list the rules")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(standalone_fn=cmd_approvals_list)
    revoke = approvals_sub.add_parser("revoke", help="revoke a rule by id")
    revoke.add_argument("rule_id", type=int)
    revoke.set_defaults(standalone_fn=cmd_approvals_revoke)
    add_learning_commands(sub)
    add_ops_commands(sub)
    add_server_commands(sub)
    add_llama_commands(sub)
    add_undo_command(sub)
    add_export_commands(sub)
    add_search_command(sub)
    add_mcp_commands(sub)
    return parser


def _add_run_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print events as JSON lines")
    parser.add_argument("--no-critic", action="store_true", help="skip the critic this run")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory policy")


async def cmd_doctor(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm doctor`."""
    from ducklm.cli.doctor import run_checks  # noqa: PLC0415  in-process only

    checks = await run_checks(duck)
    for check in checks:
        if args.json:
            print(json.dumps(check.__dict__))
        else:
            mark = "ok  " if check.ok else "FAIL"
            print(f"[{mark}] {check.name}: {check.detail}")
            if not check.ok and check.fix:
                print(f"       fix: {check.fix}")
    return 0 if all(c.ok for c in checks) else 1


async def cmd_approvals_list(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm approvals list`: reads the rules from DuckLM's tables."""
    from ducklm.runtime.operator import open_operator_stores  # noqa: PLC0415
    from ducklm.stores.approvals import ApprovalRules  # noqa: PLC0415

    async with open_operator_stores(settings) as stores:
        rules = await ApprovalRules(stores.db).list()
    for rule in rules:
        if args.json:
            print(json.dumps(rule.__dict__))
        else:
            print(f"{rule.id:>4}  {rule.tool:<12} {rule.pattern}  ({rule.description})")
    return 0


async def cmd_approvals_revoke(settings: Settings, args: argparse.Namespace) -> int:
    """`ducklm approvals revoke`."""
    from ducklm.runtime.operator import open_operator_stores  # noqa: PLC0415
    from ducklm.stores.approvals import ApprovalRules  # noqa: PLC0415

    async with open_operator_stores(settings) as stores:
        revoked = await ApprovalRules(stores.db).revoke(args.rule_id)
    if revoked:
        print(f"revoked rule {args.rule_id}")
        return 0
    print(f"ducklm: no rule with id {args.rule_id}", file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
