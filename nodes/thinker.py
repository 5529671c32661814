"""thinker: write the final answer, streaming it token by token."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import AIMessageChunk, AnyMessage, BaseMessage, ToolMessage
from langgraph.runtime import Runtime

from ducklm.graph.state import DuckState
from ducklm.kit.events import TokenSender, emit
from ducklm.models.answer_stream import AnswerStream, answer_message, reasoning_of
from ducklm.models.errors import PartialAnswerError
from ducklm.turn.planning.text import plan_report
from ducklm.turn.prompting.context_cut import Outcome, ask_uncut, prompt_report
from ducklm.turn.prompting.messages import role_request
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
    # A model that writes JSON directives reads tool traffic as text and, tiny, copies
    # it: it gets this turn's results inside the request instead.
    small = ctx.models.config("action").tool_mode == "json"
    answer = await _answer_within_window(state, runtime, system, fold_tools=small)
    if answer.cut:
        emit(runtime, "answer_cut", **answer.cut_fields("thinker"))
    text = answer.text or EMPTY_ANSWER
    return {
        "messages": [answer_message(text, answer.cut, answer.reasoning)],
        "final": text,
        "review_due": state.review_after_answer(),
    }


async def _answer_within_window(
    state: DuckState, runtime: Runtime[DuckContext], system: str, *, fold_tools: bool
) -> AnswerStream:
    """The streamed answer, asked once more if the server cut the prompt.

    Packed smaller, and only when none of the answer streamed yet
    (`ducklm.turn.prompting.context_cut`).
    """
    ctx = runtime.context

    async def ask(shrink: bool) -> Outcome[AnswerStream]:
        request = await role_request(
            state, ctx, system, role="thinker", fold_tools=fold_tools, shrink=shrink
        )
        answer = AnswerStream(message.text for message in request.messages)
        try:
            said = prompt_report(await _stream_answer(ctx, runtime, request.messages, answer))
        except Exception as exc:
            if answer.streamed:
                raise PartialAnswerError from exc
            raise
        return Outcome(request, said, answer, spoken=answer.streamed)

    return await ask_uncut(runtime, "thinker", ask)


async def _stream_answer(
    ctx: DuckContext,
    runtime: Runtime[DuckContext],
    messages: list[BaseMessage],
    answer: AnswerStream,
) -> list[AIMessageChunk]:
    """Stream the answer; its chunks (the last say how much of the prompt the server read)."""
    tokens = TokenSender(runtime)
    read: list[AIMessageChunk] = []
    # Closed on leaving: a repeating answer ends the request, and with it the server's work.
    # (`astream` is an async generator; its annotation says only iterator.)
    chunks = cast(
        AsyncGenerator[AIMessageChunk],
        ctx.models.chat("thinker").astream(messages, stream_usage=True),
    )
    async with aclosing(chunks) as stream:
        async for chunk in stream:
            read.append(chunk)
            going_on = answer.admit(chunk)
            if thought := reasoning_of(chunk):
                emit(runtime, "reasoning", text=thought, source="thinker")
            if chunk.text:
                await tokens.send(chunk.text)
            if not going_on:
                break
    return read


def _notes(state: DuckState, last: AnyMessage | None) -> str:
    notes = observations_text(state.observations)
    if isinstance(last, ToolMessage) and state.step >= state.step_limit:
        step_note = "- " + STEP_LIMIT_NOTE.format(n=state.step_limit)
        notes = f"{notes}\n{step_note}" if notes else step_note
    return notes
