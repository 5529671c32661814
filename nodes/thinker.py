"""thinker: write the final answer, streaming it token by token."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.runtime import Runtime

from ducklm.graph.state import DuckState
from ducklm.kit.events import TokenSender
from ducklm.models.errors import PartialAnswerError
from ducklm.turn.planning.text import plan_report
from ducklm.turn.prompting.messages import role_messages
from ducklm.turn.prompting.transcript import observations_text

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

EMPTY_ANSWER = "(The model returned an empty answer.)"
STEP_LIMIT_NOTE = "The tool step limit ({n}) was reached; answer with what you have."
NOTES_HEADER = "\n\nNotes on this turn:\n"


async def write_answer(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Stream the thinker's answer to the turn."""
    ctx = runtime.context
    last = state.messages[-1] if state.messages else None
    system = ctx.prompts.render("thinker", workspace=state.workspace) + plan_report(state)
    notes = _notes(state, last)
    if notes:
        system += NOTES_HEADER + notes
    parts: list[str] = []  # the answer is text only: no chunk merging needed
    try:
        # A model that writes JSON directives reads tool traffic as text and, tiny, copies
        # it: it gets this turn's results inside the request instead.
        small = ctx.models.config("action").tool_mode == "json"
        messages = await role_messages(state, ctx, system, fold_tools=small)
        tokens = TokenSender(runtime)
        async for chunk in ctx.models.chat("thinker").astream(messages):
            if chunk.text:
                parts.append(chunk.text)
                await tokens.send(chunk.text)
    except Exception as exc:
        if parts:
            raise PartialAnswerError from exc
        raise
    answer = "".join(parts).strip() or EMPTY_ANSWER
    return {
        "messages": [AIMessage(content=answer)],
        "final": answer,
        "review_due": state.review_after_answer(),
    }


def _notes(state: DuckState, last: AnyMessage | None) -> str:
    notes = observations_text(state.observations)
    if isinstance(last, ToolMessage) and state.step >= state.step_limit:
        step_note = "- " + STEP_LIMIT_NOTE.format(n=state.step_limit)
        notes = f"{notes}\n{step_note}" if notes else step_note
    return notes
