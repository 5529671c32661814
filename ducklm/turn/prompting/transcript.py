"""How the conversation in state is shown to a model.

Native tool calling sends the messages as they are. Roles that are not given tools (the
thinker, the critic) and models in json mode see tool calls and results as plain text:
small local models and their chat templates often cannot take `tool` messages.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage

NOT_RUN = "not run: the turn ended before this call ran"


def for_native_tools(messages: Sequence[AnyMessage]) -> list[BaseMessage]:
    """Messages for a model with tools bound.

    A tool call with no result (a run that died mid-call) gets one, because OpenAI-style
    servers reject a history with unanswered tool calls.
    """
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    out: list[BaseMessage] = []
    for message in messages:
        out.append(message)
        if isinstance(message, AIMessage):
            out.extend(
                ToolMessage(content=NOT_RUN, tool_call_id=call["id"], status="error")
                for call in message.tool_calls
                if call["id"] and call["id"] not in answered
            )
    return out


def as_text(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Messages with tool calls and results turned into plain text."""
    out: list[BaseMessage] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            status = "failed" if message.status == "error" else "result"
            out.append(
                HumanMessage(content=f"[tool {message.name or 'call'} {status}]\n{message.text}")
            )
        elif isinstance(message, AIMessage) and message.tool_calls:
            calls = "; ".join(
                f"{c['name']}({json.dumps(c['args'], ensure_ascii=False)})"
                for c in message.tool_calls
            )
            prefix = f"{message.text}\n" if message.text else ""
            out.append(AIMessage(content=f"{prefix}[calling tools: {calls}]"))
        elif isinstance(message, (HumanMessage, AIMessage)):
            out.append(message)
    return out


FOLDED = "{request}\n\nWhat the tools gave for this request:\n\n{results}"


def fold_turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The turn's tool calls and results folded into its request, one user message.

    A tiny model shown `[calling tools: ...]` as its own last turn writes more of the
    same instead of an answer (SmolLM2 answered 'List the files' with
    '[calling tools: list_dir(...)]'); with the results inside the request it answers
    from them.

    The earlier turns are left out of it: given them, SmolLM2 copied its previous answers
    into the new one (five requests typed into one web chat conversation: from the second
    on, every answer repeated the first's text after or instead of the results). The
    action role read the history and chose the calls; the results are what the answer
    needs.
    """
    start = next(
        (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)),
        None,
    )
    if start is None:
        return list(messages)
    results = [m for m in messages[start + 1 :] if isinstance(m, ToolMessage)]
    if not results:
        return list(messages)
    text = "\n\n".join(m.text for m in as_text(results))
    folded = FOLDED.format(request=messages[start].text, results=text)
    return [HumanMessage(content=folded)]


def observations_text(observations: Sequence[dict[str, object]]) -> str:
    """Notes of this turn that are not in the messages (e.g. a failed directive)."""
    notes = [str(o["note"]) for o in observations if o.get("note")]
    return "\n".join(f"- {n}" for n in notes)


def transcript_text(messages: Sequence[BaseMessage], last: int = 12) -> str:
    """The last `last` messages as one block of text, for roles that review a turn."""
    return "\n\n".join(f"{m.type}: {m.text}" for m in as_text(messages[-last:]))


def latest_request(messages: Sequence[AnyMessage]) -> str:
    """The text of the last human message: what this turn is about."""
    return next((m.text for m in reversed(messages) if isinstance(m, HumanMessage)), "")
