"""An answer straight from a tool result, when the result is the answer.

LangChain's `return_direct`: "What does my notes file say?" is answered by the file's
text, "what files are here" by the listing, "what's the date" by `date`'s output. The
bundled model, asked to answer from such a result, restated DuckLM's prompts or
contradicted the result in all 23 tool-needing requests tried; a lead line and the
result verbatim cannot. When the request asked for a part or a measure of the result (a
line, a count, a size, a version, a yes or no: `ducklm.turn.measure_rules`), the answer
is that, computed from the result. It applies to a one-call turn (a rule shortcut's call, or the
tool chosen by meaning) whose call succeeded; a failed call, or any other turn, goes to
the thinker as before.

Everything here is pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.messages.tool import ToolCall

from ducklm.graph.state import DuckState
from ducklm.turn.measure_rules import statement
from ducklm.turn.shortcuts import NO_TOOL

LEADS = {
    "file_read": "`{path}`:",
    "list_dir": "In {folder}:",
    "search_files": "Lines with {query!r}:",
    "shell_exec": "`{command}` printed:",
    "search_conversations": "From earlier conversations ({query!r}):",
}
"""The line before a result shown as it is, per tool."""
WROTE = frozenset({"file_write", "file_delete", "file_move", "file_copy", "file_append"})
"""Their results are sentences of their own ("deleted old.log"), shown without a block."""
SHELL_OK = re.compile(r"\Aexit code 0\n?")


def direct_answer(state: DuckState) -> str | None:
    """The answer the turn's one tool result gives by itself, or `None`."""
    route = state.route
    shortcut = route.shortcut if route is not None else None
    one_call = route is not None and (
        route.selected is not None or (shortcut is not None and shortcut.tool != NO_TOOL)
    )
    if not one_call or state.current_step:
        return None
    found = _one_result(state.messages)
    if found is None:
        return None
    call, result = found
    name, args = call["name"], call["args"]
    text = str(result.text)
    if shortcut is not None and (said := statement(shortcut, state.task, text)) is not None:
        return said  # the part or the measure asked for, not the whole result
    return _shown(name, args, text)


def _shown(name: str, args: dict[str, Any], text: str) -> str | None:
    """The result as it is, behind its lead line; `None` when it needs explaining."""
    if name in WROTE:
        return text.strip()[:1].upper() + text.strip()[1:] if text.strip() else None
    if name == "shell_exec":
        if not SHELL_OK.match(text):
            return None  # a failing command needs explaining
        text = SHELL_OK.sub("", text)
    lead = LEADS.get(name)
    if lead is None or not text.strip():
        return None
    folder = str(args.get("path") or ".")
    fields = {"folder": "the workspace" if folder == "." else f"`{folder}`", **args}
    try:
        head = lead.format(**fields)
    except (KeyError, IndexError):
        head = f"{name}:"
    return f"{head}\n\n{fenced(text.rstrip())}"


def fenced(text: str) -> str:
    """`text` in a Markdown code block whose fence does not occur in it."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text}\n{fence}"


def _one_result(messages: Sequence[AnyMessage]) -> tuple[ToolCall, ToolMessage] | None:
    """The last call and its result, if the result ends the messages and succeeded."""
    if len(messages) < 2:
        return None
    result, asked = messages[-1], messages[-2]
    if not isinstance(result, ToolMessage) or result.status == "error":
        return None
    if not isinstance(asked, AIMessage) or len(asked.tool_calls) != 1:
        return None
    call = asked.tool_calls[0]
    if call["id"] != result.tool_call_id:
        return None
    return call, result
