"""Calls the turn already made: a repeat is answered from the earlier outcome, not run or asked.

A small model that gets a result (or a refusal) often makes the same call again, and
again: four identical `rm` questions in one turn, each approved, or asked again after
every Deny. So within one turn (the messages after its request):

- a call the person declined is not asked again: its repeat gets the person's reason;
- a call that already ran is not run again: its repeat gets the earlier result, marked
  as such, unless a different call that may change the workspace ran since (then the
  earlier result may be stale, and the call runs);
- a tool step made only of repeats ends the loop (`graph.routing.route_after_tool`).

What the turn did is read from its messages, not kept in a state field of its own: each
ToolMessage says in its artifact whether the person declined it (`declined`) or it
repeated another (`repeat_of`). The messages are what the model was told, they are
checkpointed anyway, and a resume, a restart, Studio and a time-travelled or edited
state all read the same answer from them, with nothing to reset when a turn starts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.messages.tool import ToolCall
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError

from ducklm.tools.policy import READ_ONLY_TOOLS

DECLINED_EARLIER = "the user declined this earlier in this turn: {reason}"
NO_REASON = "no reason given"
RAN_EARLIER = (
    "[not run again: this same call already ran earlier in this turn; its result was:]\n{result}"
)
DECLINED = "declined"
"""Artifact key of a call the person declined: their reason ("" for none)."""
REPEAT_OF = "repeat_of"
"""Artifact key of a call answered from an earlier one: that call's id."""

FindTool = Callable[[str], BaseTool | None]


def call_key(name: str, args: dict[str, Any], tool: BaseTool | None) -> str:
    """The call as compared with others: its tool and its arguments as the tool reads them.

    The tool's own schema fills defaults (`list_dir()` is `list_dir(path=".")`) and
    coerces types; text is compared without surrounding spaces.
    """
    schema = tool.tool_call_schema if tool is not None else None
    shown: Any = args
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        try:
            shown = schema.model_validate(args).model_dump(mode="json")
        except ValidationError:
            shown = args  # the tool reports the bad arguments; compare them as given
    stripped = {k: v.strip() if isinstance(v, str) else v for k, v in shown.items()}
    return json.dumps([name, stripped], sort_keys=True, default=str)


class TurnCalls:
    """What this turn did with each call so far: declined, or ran with a result."""

    def __init__(self, messages: Sequence[AnyMessage], find_tool: FindTool) -> None:
        self._find_tool = find_tool
        self._declined: dict[str, ToolMessage] = {}
        self._ran: dict[str, ToolMessage] = {}
        self._planned: dict[str, str] = {}
        for call, message in _turn_results(messages):
            self._note(call, message)

    def key(self, call: ToolCall) -> str:
        """`call_key` of `call`."""
        return call_key(call["name"], call["args"], self._find_tool(call["name"]))

    def earlier(self, call: ToolCall) -> str | None:
        """The id of the call `call` repeats: declined or ran earlier, or planned in this step.

        A call first seen here is noted as planned, so an identical one later in the same
        step repeats it (and shares its question).
        """
        key = self.key(call)
        found = self._declined.get(key) or self._ran.get(key)
        if found is not None:
            return found.tool_call_id
        if key in self._planned:
            return self._planned[key]
        self._planned[key] = call["id"] or ""
        return None

    def result(self, call_id: str) -> ToolMessage | None:
        """The ToolMessage of an earlier call of the turn, by its id."""
        found = (m for m in (*self._declined.values(), *self._ran.values()))
        return next((m for m in found if m.tool_call_id == call_id), None)

    def _note(self, call: ToolCall, message: ToolMessage) -> None:
        facts = message.artifact if isinstance(message.artifact, dict) else {}
        if REPEAT_OF in facts:
            return  # nothing ran: the earlier call's outcome stands
        key = self.key(call)
        if DECLINED in facts:
            self._declined[key] = message
            return
        if call["name"] not in READ_ONLY_TOOLS:
            # It may have changed the workspace: what other calls read may be stale now.
            self._ran = {k: m for k, m in self._ran.items() if k == key}
        self._ran[key] = message


def repeat_message(call: ToolCall, earlier: ToolMessage) -> ToolMessage:
    """The answer to `call`, a repeat of the call `earlier` answered, without running it."""
    facts = earlier.artifact if isinstance(earlier.artifact, dict) else {}
    if DECLINED in facts:
        reason = str(facts[DECLINED] or NO_REASON)
        content = DECLINED_EARLIER.format(reason=reason)
    else:
        content = RAN_EARLIER.format(result=earlier.text)
    return ToolMessage(
        content=content,
        tool_call_id=call["id"] or "",
        name=call["name"],
        status=earlier.status,
        artifact={REPEAT_OF: earlier.tool_call_id},
    )


def only_repeats(messages: Sequence[AnyMessage]) -> bool:
    """Whether the last tool step answered every call from an earlier one (nothing new)."""
    results: list[ToolMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        results.append(message)
    return bool(results) and all(_is_repeat(m) for m in results)


def _is_repeat(message: ToolMessage) -> bool:
    return isinstance(message.artifact, dict) and REPEAT_OF in message.artifact


def _turn_results(messages: Sequence[AnyMessage]) -> list[tuple[ToolCall, ToolMessage]]:
    """Each tool result of the turn (after its last request) with the call it answers."""
    start = next(
        (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)),
        -1,
    )
    calls: dict[str, ToolCall] = {}
    pairs = []
    for message in messages[start + 1 :]:
        if isinstance(message, AIMessage):
            calls = {c["id"] or "": c for c in message.tool_calls}
        elif isinstance(message, ToolMessage) and message.tool_call_id in calls:
            pairs.append((calls[message.tool_call_id], message))
    return pairs
