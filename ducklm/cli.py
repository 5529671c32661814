"""The `ducklm` command.

Exit codes: 0 the run completed, 3 it is waiting for a decision, 1 it failed, 2 the
command itself was wrong (bad settings, bad arguments, nothing to resume).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from ducklm.cli_learning import add_learning_commands
from ducklm.cli_llama import add_llama_commands
from ducklm.cli_ops import add_ops_commands
from ducklm.cli_server import add_server_commands
from ducklm.console import ConsolePrinter, print_run
from ducklm.context import NO_SANDBOX
from ducklm.doctor import run_checks
from ducklm.events import Event
from ducklm.logs import start_file_logging
from ducklm.memory import MemoryNotFound
from ducklm.role_prompts import PromptError
from ducklm.roles import ModelsConfigError
from ducklm.runtime import DuckLM, NotWaitingError, new_thread_id
from ducklm.settings import SettingsError, load_settings
from ducklm.skill_proposals import ProposalError
from ducklm.stores import DatabaseUnavailable, ThreadRunning
from ducklm.tools.hitl import DecisionError, is_password_request

EXIT_CODES = {"completed": 0, "interrupted": 3, "failed": 1}
EXIT_USAGE = 2
USER_ERRORS = (
    SettingsError,
    ModelsConfigError,
    PromptError,
    DecisionError,
    NotWaitingError,
    ProposalError,
    MemoryNotFound,
    LookupError,
    ThreadRunning,  # another process (a server beside this CLI) runs the thread
    DatabaseUnavailable,  # DUCK_DATABASE_URL names a server that does not answer
)

Command = Callable[[DuckLM, argparse.Namespace], Coroutine[Any, Any, int]]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `ducklm` command."""
    args = build_parser().parse_args(argv)
    try:
        if hasattr(args, "standalone_fn"):
            return asyncio.run(_run_standalone(args))
        return asyncio.run(_run(args.command_fn, args))
    except USER_ERRORS as exc:
        print(f"ducklm: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


async def _run(command: Command, args: argparse.Namespace) -> int:
    settings = await asyncio.to_thread(load_settings)
    listener = await asyncio.to_thread(start_file_logging, settings.data_dir)
    try:
        async with DuckLM.open(settings) as duck:
            if duck.context.protection == "none" and command is not cmd_doctor:
                print(f"ducklm: warning: {NO_SANDBOX}", file=sys.stderr)
            return await command(duck, args)
    finally:
        await asyncio.to_thread(listener.stop)


async def _run_standalone(args: argparse.Namespace) -> int:
    settings = await asyncio.to_thread(load_settings)
    listener = await asyncio.to_thread(start_file_logging, settings.data_dir)
    try:
        code: int = await args.standalone_fn(settings, args)
        return code
    finally:
        await asyncio.to_thread(listener.stop)


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
    _add_run_flags(chat)
    chat.set_defaults(command_fn=cmd_chat)

    resume = sub.add_parser("resume", help="answer the approval a thread is waiting for")
    resume.add_argument("thread", help="the conversation id printed when the run paused")
    resume.add_argument(
        "--decision",
        choices=["approve", "reject", "allow_forever", "edit"],
        help="the answer to the approval; without it, go on with a run the process left "
        "unfinished (a command that had started is reported, not run again)",
    )
    resume.add_argument("--args", help="with --decision edit: the new arguments as JSON")
    resume.add_argument("--message", help="with --decision reject: a note for the model")
    _add_run_flags(resume)
    resume.set_defaults(command_fn=cmd_resume)

    password = sub.add_parser("password", help="give the sudo password a thread waits for")
    password.add_argument("thread")
    password.add_argument("--cancel", action="store_true", help="refuse: the command won't run")
    _add_run_flags(password)
    password.set_defaults(command_fn=cmd_password)

    doctor = sub.add_parser(
        "doctor",
        help="check the sandbox, model servers, each role's model, the embedding model, "
        "Qdrant and the data dir, and say what to do about each problem",
    )
    doctor.add_argument("--json", action="store_true")
    doctor.set_defaults(command_fn=cmd_doctor)

    approvals = sub.add_parser("approvals", help="list or revoke allow-forever rules")
    approvals_sub = approvals.add_subparsers(dest="approvals_command", required=True)
    listing = approvals_sub.add_parser("list", help="list the rules")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(command_fn=cmd_approvals_list)
    revoke = approvals_sub.add_parser("revoke", help="revoke a rule by id")
    revoke.add_argument("rule_id", type=int)
    revoke.set_defaults(command_fn=cmd_approvals_revoke)
    add_learning_commands(sub)
    add_ops_commands(sub)
    add_server_commands(sub)
    add_llama_commands(sub)
    return parser


def _add_run_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print events as JSON lines")
    parser.add_argument("--no-critic", action="store_true", help="skip the critic this run")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory policy")


async def cmd_chat(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm chat`."""
    flags: dict[str, Any] = {"critic": not args.no_critic, "memory": not args.no_memory}
    if args.message is not None:
        stream = duck.stream(args.message, thread_id=args.thread, **flags)
        return await _print_run(stream, ConsolePrinter(as_json=args.json))
    return await _interactive(duck, args.thread or new_thread_id(), flags, args.json)


async def cmd_resume(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm resume`: the same decision for every action the thread is waiting on."""
    printer = ConsolePrinter(as_json=args.json)
    if args.decision is None:
        return await _print_run(duck.continue_run(args.thread), printer)
    _, request = await duck.pending_request(args.thread)
    decision = _decision(args.decision, args.args, args.message)
    decisions = [decision] * len(request["action_requests"])
    stream = duck.resume(
        args.thread, decisions, critic=not args.no_critic, memory=not args.no_memory
    )
    return await _print_run(stream, ConsolePrinter(as_json=args.json))


async def cmd_password(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm password`: read the password without echo and hand it over, or cancel."""
    printer = ConsolePrinter(as_json=args.json)
    if args.cancel:
        return await _print_run(duck.cancel_password(args.thread), printer)
    await duck.pending_request(args.thread)  # fail before prompting when nothing waits
    secret = await asyncio.to_thread(_read_secret)
    return await _print_run(duck.provide_password(args.thread, secret), printer)


async def cmd_doctor(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm doctor`."""
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


async def cmd_approvals_list(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm approvals list`."""
    for rule in await duck.approval_rules():
        if args.json:
            print(json.dumps(rule.__dict__))
        else:
            print(f"{rule.id:>4}  {rule.tool:<12} {rule.pattern}  ({rule.description})")
    return 0


async def cmd_approvals_revoke(duck: DuckLM, args: argparse.Namespace) -> int:
    """`ducklm approvals revoke`."""
    if await duck.revoke_rule(args.rule_id):
        print(f"revoked rule {args.rule_id}")
        return 0
    print(f"ducklm: no rule with id {args.rule_id}", file=sys.stderr)
    return EXIT_USAGE


def _decision(kind: str, raw_args: str | None, message: str | None) -> dict[str, Any]:
    if kind == "edit":
        if raw_args is None:
            raise DecisionError("--decision edit needs --args with the new arguments as JSON")
        try:
            new_args = json.loads(raw_args)
        except json.JSONDecodeError as exc:
            raise DecisionError(f"--args is not valid JSON: {exc.msg}") from None
        return {"type": "edit", "edited_action": {"args": new_args}}
    if kind == "reject" and message:
        return {"type": "reject", "message": message}
    return {"type": kind}


async def _print_run(stream: AsyncIterator[Event], printer: ConsolePrinter) -> int:
    return await print_run(stream, printer)


async def _interactive(duck: DuckLM, thread_id: str, flags: dict[str, Any], as_json: bool) -> int:
    print(f"DuckLM chat on thread {thread_id}. Empty line or Ctrl-D to leave.", file=sys.stderr)
    code = 0
    while True:
        try:
            line = await asyncio.to_thread(input, "you> ")
        except EOFError:
            return code
        if not line.strip():
            return code
        code = await _print_run(
            duck.stream(line, thread_id=thread_id, **flags), ConsolePrinter(as_json=as_json)
        )
        while code == EXIT_CODES["interrupted"]:
            code = await _answer_interactively(duck, thread_id, flags, as_json)


async def _answer_interactively(
    duck: DuckLM, thread_id: str, flags: dict[str, Any], as_json: bool
) -> int:
    """Ask the person at the terminal what the paused run waits for, and go on."""
    printer = ConsolePrinter(as_json=as_json)
    _, request = await duck.pending_request(thread_id)
    try:
        if is_password_request(request):
            secret = await asyncio.to_thread(_read_secret)
            return await _print_run(duck.provide_password(thread_id, secret), printer)
        answer = await asyncio.to_thread(input, "decision [approve/reject/allow_forever]> ")
        decision = _decision(answer.strip() or "reject", None, None)
        decisions = [decision] * len(request["action_requests"])
        return await _print_run(duck.resume(thread_id, decisions, **flags), printer)
    except DecisionError as exc:
        print(f"ducklm: {exc}", file=sys.stderr)
        return EXIT_CODES["interrupted"]


def _read_secret() -> str:
    """A password from the terminal without echo, or the first line of piped stdin."""
    if sys.stdin.isatty():
        return getpass.getpass("sudo password: ")
    return sys.stdin.readline().rstrip("\n")


if __name__ == "__main__":
    sys.exit(main())
