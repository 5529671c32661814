"""thinker: write the final answer, streaming it token by token."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, AnyMessage, ToolMessage
from langgraph.runtime import Runtime

from ducklm.context import DuckContext
from ducklm.events import emit
from ducklm.graph.state import DuckState
from ducklm.model_errors import PartialAnswerError
from ducklm.nodes.structured import with_system
from ducklm.nodes.transcript import as_text, observations_text

EMPTY_ANSWER = "(The model returned an empty answer.)"
STEP_LIMIT_NOTE = "The tool step limit ({n}) was reached; answer with what you have."
NOTES_HEADER = "\n\nNotes on this turn:\n"


async def write_answer(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Stream the thinker's answer, or keep the action role's when it already answered."""
    ctx = runtime.context
    last = state.messages[-1] if state.messages else None
    if answered_by_action(last, ctx):
        assert isinstance(last, AIMessage)
        return {"final": last.text}
    system = ctx.prompts.render("thinker", workspace=state.workspace)
    notes = _notes(state, ctx, last)
    if notes:
        system += NOTES_HEADER + notes
    reply: AIMessageChunk | None = None
    try:
        async for chunk in ctx.models.chat("thinker").astream(
            with_system(system, as_text(state.messages))
        ):
            reply = chunk if reply is None else reply + chunk
            if chunk.text:
                emit(runtime, "token", text=chunk.text)
    except Exception as exc:
        if reply is not None and reply.text:
            raise PartialAnswerError from exc
        raise
    answer = (reply.text if reply is not None else "").strip() or EMPTY_ANSWER
    return {"messages": [AIMessage(content=answer)], "final": answer}


def answered_by_action(last: AnyMessage | None, ctx: DuckContext) -> bool:
    """Whether the action role's last reply is already the answer (and has streamed).

    True in native mode when the action role replied with text and no tool calls, and the
    thinker role is the same model on the same server: asking again would only repeat it.
    """
    return (
        isinstance(last, AIMessage)
        and not last.tool_calls
        and not last.invalid_tool_calls
        and bool(last.text.strip())
        and ctx.models.config("action").tool_mode == "native"
        and ctx.models.same_model("action", "thinker")
    )


def _notes(state: DuckState, ctx: DuckContext, last: AnyMessage | None) -> str:
    notes = observations_text(state.observations)
    if isinstance(last, ToolMessage) and state.step >= ctx.settings.max_action_steps:
        step_note = "- " + STEP_LIMIT_NOTE.format(n=ctx.settings.max_action_steps)
        notes = f"{notes}\n{step_note}" if notes else step_note
    return notes
