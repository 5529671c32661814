"""`ducklm chat`, `resume` and `password`, written once over a conversation door.

The door is `DuckLM` itself when the CLI runs the graph in-process, or
`ducklm.cli.remote.RemoteConversations` when a `ducklm serve` runs on the same data dir.
Either way the commands print the same lines and exit with the same codes.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol

from ducklm.cli.console import EXIT_CODES, ConsolePrinter, print_run
from ducklm.cli.elicit import prompt_answer, read_elicit
from ducklm.cli.remote_client import ServerRefused
from ducklm.mcp.errors import TypedInputError
from ducklm.tools.hitl import (
    Answer,
    DecisionError,
    Decisions,
    is_password_request,
    is_server_question,
    read_decisions,
)

if TYPE_CHECKING:
    from ducklm.kit.events import Event


class ConversationDoor(Protocol):
    """What the conversation commands need; `DuckLM` has exactly these methods."""

    def stream(
        self,
        message: str,
        *,
        thread_id: str | None = None,
        critic: bool = True,
        memory: bool = True,
    ) -> AsyncIterator[Event]:
        """Run `message` as a new task on a thread."""
        ...

    def send(
        self,
        message: str,
        *,
        thread_id: str | None = None,
        critic: bool = True,
        memory: bool = True,
    ) -> AsyncIterator[Event]:
        """Run what the person typed: `/server:prompt` and `@server:uri` expanded first."""
        ...

    def resume(
        self,
        thread_id: str,
        decisions: Decisions,
        *,
        critic: bool | None = None,
        memory: bool | None = None,
    ) -> AsyncIterator[Event]:
        """Answer the approval the thread waits at."""
        ...

    def continue_run(self, thread_id: str) -> AsyncIterator[Event]:
        """Go on with a run the process left unfinished."""
        ...

    def answer(
        self,
        thread_id: str,
        answer: Answer,
        *,
        critic: bool | None = None,
        memory: bool | None = None,
    ) -> AsyncIterator[Event]:
        """Answer the question the thread waits at (here: an MCP server's question)."""
        ...

    def provide_password(self, thread_id: str, password: str) -> AsyncIterator[Event]:
        """Give the sudo password the thread waits for."""
        ...

    def cancel_password(self, thread_id: str) -> AsyncIterator[Event]:
        """Refuse the password: the command does not run."""
        ...

    async def pending_request(self, thread_id: str) -> tuple[str, Any]:
        """The question the thread waits at: its interrupt id and request."""
        ...

    def review_pending(self, thread_id: str) -> bool:
        """Whether a review behind the thread's answer is left to this process to run."""
        ...

    async def finish_review(self, thread_id: str) -> None:
        """Return once the thread's reviews have run."""
        ...

    async def skip_review(self, thread_id: str) -> int:
        """Skip the thread's reviews (recorded as skipped by the person)."""
        ...

    async def choose_model(self, thread_id: str, model: str | None) -> str | None:
        """Answer the thread's later turns with `model`, one the model server offers."""
        ...


REVIEWING = "ducklm: reviewing... (the critic and memory policy; Ctrl-C skips)"
REVIEW_SKIPPED = "ducklm: review skipped"


async def cmd_chat(door: ConversationDoor, args: argparse.Namespace) -> int:
    """`ducklm chat`."""
    flags: dict[str, Any] = {"critic": not args.no_critic, "memory": not args.no_memory}
    # A uuid4, as `ducklm.runtime.facade.new_thread_id` makes them (importing it loads the graph).
    thread_id = args.thread or str(uuid.uuid4())
    if args.model is not None:  # before the first message: every turn of it answers so
        await door.choose_model(thread_id, args.model)
    if args.message is not None:
        stream = door.send(args.message, thread_id=thread_id, **flags)
        code = await print_run(stream, ConsolePrinter(as_json=args.json))
    else:
        code = await _interactive(door, thread_id, flags, args.json)
    await finish_review(door, thread_id)
    return code


async def cmd_resume(door: ConversationDoor, args: argparse.Namespace) -> int:
    """`ducklm resume`: the same decision for every action the thread is waiting on."""
    printer = ConsolePrinter(as_json=args.json)
    if args.elicit is not None:
        # No switches: the turn's were set when it started, and a second write of them at
        # the same paused step is refused by LangGraph (one value per step).
        stream = door.answer(args.thread, read_elicit(args.elicit))
        code = await print_run(stream, printer)
        await finish_review(door, args.thread)
        return code
    if args.decision is None:
        return await print_run(door.continue_run(args.thread), printer)
    _, request = await door.pending_request(args.thread)
    count = len(request["action_requests"])
    decisions = make_decisions(args.decision, args.args, args.message, count)
    stream = door.resume(
        args.thread, decisions, critic=not args.no_critic, memory=not args.no_memory
    )
    code = await print_run(stream, printer)
    await finish_review(door, args.thread)
    return code


async def cmd_password(door: ConversationDoor, args: argparse.Namespace) -> int:
    """`ducklm password`: read the password without echo and hand it over, or cancel."""
    printer = ConsolePrinter(as_json=args.json)
    if args.cancel:
        return await print_run(door.cancel_password(args.thread), printer)
    await door.pending_request(args.thread)  # fail before prompting when nothing waits
    secret = await asyncio.to_thread(read_secret)
    return await print_run(door.provide_password(args.thread, secret), printer)


async def finish_review(door: ConversationDoor, thread_id: str) -> None:
    """Run the review behind the answer before the command exits; Ctrl-C skips it.

    Run in-process, the critic and memory policy come after the printed answer: a
    command that exited at once would leave them to the next start, which records them
    as interrupted, and the memory policy would never run. Ctrl-C records them as
    skipped by the person, and the command ends as its run did.
    """
    if not door.review_pending(thread_id):
        return  # none due, or the server runs it
    print(REVIEWING, file=sys.stderr, flush=True)
    try:
        await door.finish_review(thread_id)
    except asyncio.CancelledError:  # Ctrl-C: asyncio.run cancels the command's task
        current = asyncio.current_task()
        if current is None or current.uncancel() > 0:
            raise  # cancelled for another reason too: that goes on
        await door.skip_review(thread_id)
        print(REVIEW_SKIPPED, file=sys.stderr, flush=True)


def make_decisions(kind: str, raw_args: str | None, message: str | None, count: int) -> Decisions:
    """`count` times the decision `--decision KIND [--args JSON] [--message TEXT]` stands for.

    Read here, at the CLI's edge, into the one typed answer every door hands on.

    Raises:
        DecisionError: An unknown KIND, `edit` without `--args`, or `--args` that is not
            a JSON object.
    """
    return read_decisions({"decisions": [_raw_decision(kind, raw_args, message)] * count})


def _raw_decision(kind: str, raw_args: str | None, message: str | None) -> dict[str, Any]:
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


async def _interactive(
    door: ConversationDoor, thread_id: str, flags: dict[str, Any], as_json: bool
) -> int:
    print(f"DuckLM chat on thread {thread_id}. Empty line or Ctrl-D to leave.", file=sys.stderr)
    code = 0
    while True:
        try:
            line = await asyncio.to_thread(input, "you> ")
        except EOFError:
            return code
        if not line.strip():
            return code
        try:
            code = await print_run(
                door.send(line, thread_id=thread_id, **flags), ConsolePrinter(as_json=as_json)
            )
        except (TypedInputError, ServerRefused) as exc:  # a bad line: say so, read another
            print(f"ducklm: {exc}", file=sys.stderr)
            continue
        while code == EXIT_CODES["interrupted"]:
            code = await _answer_interactively(door, thread_id, flags, as_json)


async def _answer_interactively(
    door: ConversationDoor, thread_id: str, flags: dict[str, Any], as_json: bool
) -> int:
    """Ask the person at the terminal what the paused run waits for, and go on."""
    printer = ConsolePrinter(as_json=as_json)
    _, request = await door.pending_request(thread_id)
    try:
        if is_password_request(request):
            secret = await asyncio.to_thread(read_secret)
            return await print_run(door.provide_password(thread_id, secret), printer)
        if is_server_question(request):
            server_answer = await prompt_answer(request)
            return await print_run(door.answer(thread_id, server_answer), printer)
        answer = await asyncio.to_thread(input, "decision [approve/reject/allow_forever]> ")
        count = len(request["action_requests"])
        decisions = make_decisions(answer.strip() or "reject", None, None, count)
        return await print_run(door.resume(thread_id, decisions, **flags), printer)
    except DecisionError as exc:
        print(f"ducklm: {exc}", file=sys.stderr)
        return EXIT_CODES["interrupted"]


def read_secret() -> str:
    """A password from the terminal without echo, or the first line of piped stdin."""
    if sys.stdin.isatty():
        return getpass.getpass("sudo password: ")
    return sys.stdin.readline().rstrip("\n")


if TYPE_CHECKING:
    from ducklm.runtime.facade import DuckLM

    def _duck_is_a_door(duck: DuckLM) -> ConversationDoor:
        return duck  # mypy checks here that the in-process runtime fits the door
