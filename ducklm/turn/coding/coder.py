"""The coder: asks the `coder` role for a file's new content and turns it into a proposal.

`propose_change` reads the file inside the workspace (the file tools' path rules), asks
the role for the whole new file as JSON (`CodeChange`), checks Python syntax (one more
try with the error shown) and returns a `CodeProposal` (`ducklm.turn.coding.proposals`) with
the diff. It never writes and never asks a person: the graph keeps the proposal in its
state, shows the diff at the approval and writes through `file_write`'s rules, so a
resume never asks the model again.
"""

from __future__ import annotations

import difflib
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import openai
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel, Field, ValidationError

from ducklm.config.yaml_files import validation_details
from ducklm.models.tokens import TokenCounter, estimate_tokens, fit_head_tail, prefetched
from ducklm.tools.errors import ToolError
from ducklm.tools.file_threads import run_file_work
from ducklm.tools.files import read_file_text
from ducklm.tools.workspace import relative_name, resolve_in_workspace
from ducklm.turn.coding.proposals import CodeProposal, CoderOp  # re-exported: the coder's API
from ducklm.turn.prompting.structured import JSONReplyError, parse_json, system_prompt, with_system

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

# Model-facing text. Small models follow a plain task line better than a long brief.
TASK = {
    "generate": "Write the file `{path}` following the instructions.",
    "fix": "Fix the file `{path}` so that the error below goes away.",
    "refactor": "Refactor the file `{path}` following the instructions; keep what it does.",
}
TEXT_LABEL = {"generate": "Instructions", "fix": "The error", "refactor": "Instructions"}
CURRENT = "Current content of `{path}`:\n{fenced}"
NEW_FILE = "`{path}` does not exist yet: write it from scratch."
REPLY_FORMAT = (
    'Reply with one JSON object: {"content": "<the whole new file>", '
    '"explanation": "<one short sentence>"}.'
)
SYNTAX_RETRY = (
    "Your version of `{path}` is not valid Python: {error}\nYour version:\n{fenced}\n"
    "Correct it and reply with the whole file in the same JSON object."
)
REPAIR = (
    "Your reply could not be used: {problem}. Reply again with only the JSON object, "
    'the whole file in "content".'
)

# Errors for the action role (the caller turns them into a tool error).
NO_FILE = "no file at {path!r} to {op}; use generate_code to create it"
TOO_LARGE = (
    "{path!r} is too large for the coder ({tokens} tokens; it can read {room} and write "
    "{limit} at once); change it with file_write instead"
)
GAVE_UP = (
    "the coder gave no usable reply for {path!r} ({problem}); try again with shorter "
    "instructions, or write the file with file_write"
)
CUT_OFF = (
    "the coder's reply for {path!r} was cut off at its output limit ({limit} tokens): "
    "the file is too long to write in one reply"
)

PYTHON_SUFFIXES = frozenset({".py", ".pyi"})
# Room kept for the task lines and the chat template, and for echoing a broken reply
# back in the repair request (cut to this many tokens: enough to see the mistake).
OVERHEAD_TOKENS = 128
ECHO_TOKENS = 256
CUT = "\n[... cut to fit the input budget ...]\n"
_FENCE_LINE = re.compile(r"^ *(`{3,}|~{3,})[\w+.-]*[ \t]*$")


class CodeChange(BaseModel):
    """What the coder role answers."""

    content: str = Field(description="The whole new file, first line to last.")
    explanation: str = Field(description="One short sentence: what changed and why.")


class CoderError(ToolError):
    """The coder could not produce a usable change; the message is for the action role."""

    def __init__(self, message: str, *, attempts: int = 0) -> None:
        super().__init__(message)
        self.attempts = attempts
        """Requests made to the coder role before giving up."""


async def propose_change(
    ctx: DuckContext, op: CoderOp, path: str, text: str, *, workspace: Path
) -> CodeProposal:
    """Ask the coder role for the new content of `path` and return it as a proposal.

    Args:
        ctx: The run context (coder role, prompts, settings, token counter).
        op: What to do: write, fix or refactor the file.
        path: File path relative to the workspace, as the action role gave it.
        text: The instructions (generate, refactor) or the error to fix (fix).
        workspace: The workspace the path must stay inside.

    Raises:
        ToolError: The path is unusable, outside the workspace, not a UTF-8 text file,
            or missing for fix/refactor.
        CoderError: The file is too large, or the coder's replies were unusable.
    """
    # On a thread of its own with the file tools' deadline: a hung file system must not
    # hold a worker of the shared executor (tools/file_threads.py).
    timeout_s = ctx.settings.file_tool_timeout_s
    reading = f"{op}_code (reading the file)"
    rel, old = await run_file_work(reading, timeout_s, _read_current, workspace, path)
    if old is None and op != "generate":
        raise ToolError(NO_FILE.format(path=rel, op=op))
    ask = await _plan(ctx, op, rel, old, text, workspace=workspace)
    shown = (
        NEW_FILE.format(path=rel) if old is None else CURRENT.format(path=rel, fenced=fenced(old))
    )
    change, attempts = await _ask_change(ctx, ask.system, f"{ask.task}\n\n{shown}", rel)
    change = _keep_line_endings(old, change)
    error = python_syntax_error(rel, change.content)
    if error is not None:
        broken = fenced(fit_head_tail(change.content, ask.file_room, ask.count, CUT))
        retry = SYNTAX_RETRY.format(path=rel, error=error, fenced=broken)
        try:
            second, more = await _ask_change(ctx, ask.system, f"{ask.task}\n\n{retry}", rel)
        except CoderError as exc:
            more = exc.attempts  # the broken first version stands: the clearer report
        else:
            change = _keep_line_endings(old, second)
            error = python_syntax_error(rel, change.content)
        attempts += more
    return CodeProposal(
        op=op,
        path=rel,
        existed=old is not None,
        old_content=old or "",
        new_content=change.content,
        explanation=change.explanation,
        diff=unified_diff(rel, old, change.content),
        syntax_ok=error is None,
        syntax_error=error,
        attempts=attempts,
    )


@dataclass(frozen=True)
class _Plan:
    system: str
    task: str
    """The task line and the instructions or error, cut to fit."""
    file_room: int
    """Tokens a file's content may take in a request."""
    count: TokenCounter


async def _plan(
    ctx: DuckContext, op: CoderOp, rel: str, old: str | None, text: str, *, workspace: Path
) -> _Plan:
    """The system prompt and task of the requests, within `max_input_tokens`.

    A file that does not fit whole is refused rather than cut: the coder answers with
    the whole file, so a middle it never saw would be dropped from it.

    Raises:
        CoderError: The current file is larger than a request or a reply can hold.
    """
    system = system_prompt(ctx, "coder", CodeChange.model_json_schema(), workspace=str(workspace))
    count = await prefetched(ctx.tokens, [system, old or "", text])
    room = ctx.settings.max_input_tokens - count(system) - OVERHEAD_TOKENS - ECHO_TOKENS
    # An error (a traceback) keeps its head and tail, like any tool output.
    cap = max(min(ctx.settings.max_recent_events_tokens, room), 0)
    task = _task(op, rel, fit_head_tail(text, cap, count, CUT))
    file_room = room - count(task)
    limit = ctx.models.config("coder").max_output_tokens
    if old is not None and count(old) > min(file_room, limit):
        tokens = count(old)
        raise CoderError(TOO_LARGE.format(path=rel, tokens=tokens, room=file_room, limit=limit))
    return _Plan(system=system, task=task, file_room=max(file_room, 0), count=count)


def python_syntax_error(path: str, content: str) -> str | None:
    """Why `content` is not valid Python (`line N: message`), or None; None for other files.

    `compile` rather than `ast.parse`: it also catches errors the parser lets through,
    such as `return` outside a function. Nothing is run.
    """
    if Path(path).suffix not in PYTHON_SUFFIXES:
        return None
    try:
        with warnings.catch_warnings():
            # Invalid escapes warn while compiling; a warning is not a syntax error, and
            # under `-W error` it would turn into one.
            warnings.simplefilter("ignore")
            compile(content, path, "exec", dont_inherit=True)
    except SyntaxError as exc:  # IndentationError and TabError included
        where = f"line {exc.lineno}" if exc.lineno else "somewhere"
        code = f": {exc.text.strip()}" if exc.text and exc.text.strip() else ""
        return f"{where}: {exc.msg}{code}"
    except ValueError as exc:  # NUL bytes, on Python 3.11
        return str(exc)
    return None


def unified_diff(path: str, old: str | None, new: str) -> str:
    """A git-style unified diff of `path`; `old` None means the file is new."""
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile="/dev/null" if old is None else f"a/{path}",
        tofile=f"b/{path}",
    )
    # difflib leaves a last line without its newline glued to the next header.
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def strip_fence(content: str) -> str:
    """`content` without a Markdown code fence wrapped around all of it.

    Only a fence around the whole text is taken off: a fence inside (a README's
    example) is content.
    """
    lines = content.strip().splitlines()
    if len(lines) < 2 or not (_FENCE_LINE.match(lines[0]) and _FENCE_LINE.match(lines[-1])):
        return content
    inner = lines[1:-1]
    if any(_FENCE_LINE.match(line) for line in inner):
        return content
    return "\n".join(inner) + "\n"


def fenced(content: str) -> str:
    """`content` in a Markdown fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    fence = "`" * max(3, longest + 1)
    body = content if content.endswith("\n") or not content else content + "\n"
    return f"{fence}\n{body}{fence}"


async def _ask_change(
    ctx: DuckContext, system: str, request: str, path: str
) -> tuple[CodeChange, int]:
    """Ask for a `CodeChange`; one repair with the problem shown. Returns it and the calls made."""
    client = ctx.models.json_client("coder", "code_change", CodeChange.model_json_schema())
    messages = with_system(system, [HumanMessage(f"{request}\n\n{REPLY_FORMAT}")])
    problem = ""
    for attempt in (1, 2):
        try:
            reply = await client.ainvoke(messages)
        except openai.LengthFinishReasonError:  # json_schema replies are parsed by openai
            reply = None
        # A reply cut at the output limit would be cut again: no repair, say why.
        if reply is None or reply.response_metadata.get("finish_reason") == "length":
            limit = ctx.models.config("coder").max_output_tokens
            raise CoderError(CUT_OFF.format(path=path, limit=limit), attempts=attempt)
        try:
            change = _parse_change(reply.text)
        except (JSONReplyError, ValidationError) as exc:
            problem = validation_details(exc) if isinstance(exc, ValidationError) else str(exc)
        else:
            return change, attempt
        messages = [*messages, _echo(reply.text), HumanMessage(REPAIR.format(problem=problem))]
    raise CoderError(GAVE_UP.format(path=path, problem=problem), attempts=2)


def _parse_change(text: str) -> CodeChange:
    change = CodeChange.model_validate(parse_json(text))
    content = strip_fence(change.content)
    # POSIX text files end with a newline; small models often drop it.
    if content and not content.endswith("\n"):
        content += "\n"
    return change.model_copy(update={"content": content})


def _keep_line_endings(old: str | None, change: CodeChange) -> CodeChange:
    """A CRLF file stays CRLF: models answer with LF, and the diff would show every line."""
    if old is None or "\r\n" not in old or "\r" in change.content:
        return change
    return change.model_copy(update={"content": change.content.replace("\n", "\r\n")})


def _echo(text: str) -> AIMessage:
    """The unusable reply, cut so that the repair request stays within the budget."""
    return AIMessage(content=fit_head_tail(text, ECHO_TOKENS, estimate_tokens, CUT))


def _task(op: CoderOp, path: str, text: str) -> str:
    return f"{TASK[op].format(path=path)}\n\n{TEXT_LABEL[op]}:\n{text.strip()}"


def _read_current(workspace: Path, path: str) -> tuple[str, str | None]:
    """The workspace-relative name of `path` and its text, None if there is no file yet.

    Blocking. Same rules as `file_read`: resolved inside the workspace, opened without
    following links; a folder, a non-regular or a non-UTF-8 file is a ToolError.
    """
    target = resolve_in_workspace(workspace, path)
    rel = relative_name(workspace, target)
    if not target.is_dir() and not target.exists():
        return rel, None
    # newline="": the proposal's diff must show what writing it really changes.
    text = read_file_text(workspace, target, shown=rel, newline="")
    return rel, text
