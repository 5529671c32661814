"""The `action_decided` event: what the action role chose in one step, in either tool mode.

Without it a step that called no tool is invisible: the stream shows tool calls, and a
JSON directive that named none (or could not be used) left no trace but a note to the
thinker. The event shows the calls, or the reply as the model wrote it (clipped), and
in JSON mode whether the repair round was needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, InvalidToolCall, ToolCall
from langgraph.runtime import Runtime

from ducklm.kit.events import emit
from ducklm.models.roles import ToolMode

Outcome = Literal["tools", "answer", "step_result", "unusable"]
"""tools: calls go to the tool node; answer: the turn goes on to its answer; step_result:
the reply ends a plan step; unusable: no usable directive (json mode), no tools ran."""

DIRECTIVE_CHARS = 1000
"""Enough to read a directive; a reply that is the answer streams whole as tokens."""
ELLIPSIS = "\u2026"


def report_decision(
    runtime: Runtime[Any],
    *,
    mode: ToolMode,
    calls: Sequence[ToolCall],
    invalid: Sequence[InvalidToolCall] = (),
    text: str,
    in_step: bool,
    repaired: bool = False,
    problem: str = "",
    usable: bool = True,
    shortcut: bool = False,
) -> None:
    """Emit `action_decided` for one action step.

    Args:
        runtime: The node's runtime (its stream writer).
        mode: The action role's tool mode.
        calls: The tool calls chosen (none: no tool).
        invalid: Native calls the model sent but that could not be read.
        text: The reply as the model wrote it: its text (native) or the raw directive.
        in_step: A plan step is running (a reply without tools is its result).
        repaired: JSON mode: the directive used is the answer to the repair request.
        problem: JSON mode: why the first reply (or, unusable, the last) could not be used.
        usable: JSON mode: `False` when no usable directive came back.
        shortcut: The call is the router's rule shortcut; no model was asked.
    """
    emit(
        runtime,
        "action_decided",
        mode=mode,
        outcome=_outcome(calls, invalid, in_step=in_step, usable=usable),
        calls=[{"call_id": c["id"], "tool": c["name"], "args": c["args"]} for c in calls],
        invalid_calls=[
            {"call_id": c.get("id"), "tool": c.get("name"), "error": c.get("error")}
            for c in invalid
        ],
        directive=clip_directive(text),
        repaired=repaired,
        problem=problem,
        shortcut=shortcut,
    )


def report_message(runtime: Runtime[Any], message: AIMessage | None, *, in_step: bool) -> None:
    """Emit `action_decided` for a native tool-calling reply (`None`: the reply was empty)."""
    if message is None:
        report_decision(runtime, mode="native", calls=[], text="", in_step=in_step)
        return
    report_decision(
        runtime,
        mode="native",
        calls=message.tool_calls,
        invalid=message.invalid_tool_calls,
        text=message.text,
        in_step=in_step,
    )


def clip_directive(text: str) -> str:
    """`text` cut to `DIRECTIVE_CHARS`, the cut marked."""
    return text if len(text) <= DIRECTIVE_CHARS else text[: DIRECTIVE_CHARS - 1] + ELLIPSIS


def _outcome(
    calls: Sequence[ToolCall], invalid: Sequence[InvalidToolCall], *, in_step: bool, usable: bool
) -> Outcome:
    if not usable:
        return "unusable"
    if calls or invalid:
        return "tools"
    return "step_result" if in_step else "answer"
