"""action: the action role decides which tools to call, or that it is time to answer.

Every step ends with an `action_decided` event (`ducklm/turn/action_decision.py`). When
the router found a rule shortcut for the request (`Route.shortcut`), the turn's first
step is that call, made without asking the model (`shortcut` in the event); for the
`NO_TOOL` shortcut it is no call, and the thinker answers. When the route chose the tool
by meaning (`Route.selected`), the model fills only that tool's arguments
(`fill_arguments`).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, cast

import openai
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    BaseMessageChunk,
    message_chunk_to_message,
)
from langchain_core.messages.ai import add_ai_message_chunks
from langchain_core.messages.tool import ToolCall
from langgraph.runtime import Runtime

from ducklm.graph.state import DuckState
from ducklm.kit.events import TokenSender, emit
from ducklm.models.answer_stream import (
    AnswerStream,
    answer_message,
    reasoning_of,
    working_message,
)
from ducklm.nodes.action_json import decide_with_directive, fill_arguments
from ducklm.turn.action_decision import report_decision, report_message
from ducklm.turn.planning.text import step_brief
from ducklm.turn.prompting.context_cut import Outcome, ask_uncut, prompt_report
from ducklm.turn.prompting.messages import offered_tools, role_request
from ducklm.turn.server_found import learn_refusal, tell_tool_mode
from ducklm.turn.shortcuts import NO_TOOL

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext
    from ducklm.turn.choosing.selector import Selection


async def decide_action(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Call the action role once; the tool calls it asks for go to the tool node."""
    ctx = runtime.context
    mode = ctx.models.config("action").tool_mode
    shortcut = state.route.shortcut if state.route is not None else None
    if shortcut is not None and shortcut.tool == NO_TOOL and first_step(state):
        # The rules are sure no tool is needed: the thinker answers, no directive asked.
        report_decision(runtime, mode=mode, calls=[], text="", in_step=False, shortcut=True)
        update: dict[str, Any] = {}
    elif (call := shortcut_call(state, ctx)) is not None:
        report_decision(runtime, mode=mode, calls=[call], text="", in_step=False, shortcut=True)
        update = {"messages": [AIMessage(content="", tool_calls=[call])]}
    elif mode == "json":
        update = await _decide_with_json(state, runtime)
    else:
        update = await _decide_natively(state, runtime)
    return {**update, "step": state.step + 1}


async def _decide_with_json(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    if (selected := _selected(state)) is not None:
        return await fill_arguments(state, runtime, selected)
    return await decide_with_directive(state, runtime)


async def _decide_natively(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Native tool calls; on a server that refuses them, JSON directives from now on.

    The refusal comes before any token (a 400), so the step is asked again as a directive
    and the turn goes on (`ducklm.turn.server_found`).
    """
    try:
        return await _decide_with_tools(state, runtime)
    except openai.APIStatusError as exc:
        if "action" not in learn_refusal(runtime.context, "action", exc):
            raise
    tell_tool_mode(runtime)
    return await _decide_with_json(state, runtime)


async def _decide_with_tools(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    ctx = runtime.context
    system = ctx.prompts.render(
        "action", workspace=state.workspace, max_steps=ctx.settings.max_action_steps
    ) + step_brief(state)
    # When the thinker would send its request to this same model, a reply without tool
    # calls is the answer itself: its text streams as it comes and the thinker is skipped.
    # Inside a plan step it is the step's result, not the answer: it stays quiet.
    answer_streams = ctx.models.same_model("action", "thinker") and not state.current_step
    chunks, answer = await _ask_with_tools(state, runtime, system, answer_streams)
    if not chunks:
        report_message(runtime, None, in_step=bool(state.current_step))
        return {}
    message = cast(AIMessage, message_chunk_to_message(add_ai_message_chunks(*chunks)))
    if answer.cut and is_answer(message):
        message = answer_message(answer.text, answer.cut, answer.reasoning)  # up to the repeat
        if answer_streams:
            emit(runtime, "answer_cut", **answer.cut_fields("action"))
    report_message(runtime, message, in_step=bool(state.current_step))
    if message.text.strip() and not answer_streams:
        message = working_message(message)  # a step's result, or text nobody was shown
    update: dict[str, Any] = {"messages": [message]}
    if answer_streams and is_answer(message):
        update["final"] = message.text
        update["review_due"] = state.review_after_answer()
    return update


async def _ask_with_tools(
    state: DuckState, runtime: Runtime[DuckContext], system: str, answer_streams: bool
) -> tuple[list[AIMessageChunk], AnswerStream]:
    """The reply's chunks; asked once more, packed smaller, when the server cut the prompt.

    Not when its text already streamed as the answer: the person has it, and the
    server's smaller window serves the calls after it (`ducklm.turn.prompting.context_cut`).
    """
    ctx = runtime.context

    async def ask(shrink: bool) -> Outcome[tuple[list[AIMessageChunk], AnswerStream]]:
        tools = offered_tools(state, ctx, shrink=shrink)
        model = ctx.models.with_tools("action", tools.tools)
        request = await role_request(
            state, ctx, system, role="action", native_tools=True, shrink=shrink
        )
        # `astream` is an async generator; its annotation says only iterator.
        stream = cast(
            AsyncGenerator[BaseMessageChunk], model.astream(request.messages, stream_usage=True)
        )
        chunks, answer = await _stream_reply(runtime, stream, request.messages, answer_streams)
        spoken = answer_streams and answer.streamed
        return Outcome(request, prompt_report(chunks), (chunks, answer), spoken=spoken)

    return await ask_uncut(runtime, "action", ask)


async def _stream_reply(
    runtime: Runtime[DuckContext],
    stream: AsyncGenerator[BaseMessageChunk],
    messages: list[BaseMessage],
    answer_streams: bool,
) -> tuple[list[AIMessageChunk], AnswerStream]:
    """The reply's chunks; its text streams as the answer when `answer_streams`.

    Text before any tool call is watched as an answer: when it repeats itself the stream
    is closed there (`AnswerStream`).
    """
    # Chunks are merged once at the end: adding each to a running sum costs 20 times more.
    chunks: list[AIMessageChunk] = []
    answer = AnswerStream(message.text for message in messages)
    calling = False
    tokens = TokenSender(runtime)
    async with aclosing(stream):
        async for chunk in stream:
            chunks.append(cast(AIMessageChunk, chunk))
            if thought := reasoning_of(chunk):
                emit(runtime, "reasoning", text=thought, source="action")
            calling = calling or bool(chunks[-1].tool_call_chunks)
            if calling:
                continue
            going_on = answer.admit(chunk)
            if answer_streams and chunk.text:
                await tokens.send(chunk.text)
            if not going_on:
                break
    return chunks, answer


def shortcut_call(state: DuckState, ctx: DuckContext) -> ToolCall | None:
    """The router's shortcut as a tool call, at the turn's first step and when offered."""
    shortcut = state.route.shortcut if state.route is not None else None
    if shortcut is None or shortcut.tool == NO_TOOL or not first_step(state):
        return None
    if offered_tools(state, ctx).get(shortcut.tool) is None:
        return None
    call_id = f"call_{uuid.uuid4().hex[:12]}"
    return ToolCall(name=shortcut.tool, args=dict(shortcut.args), id=call_id, type="tool_call")


def _selected(state: DuckState) -> Selection | None:
    """The tool the route chose by meaning, at the turn's first step."""
    selected = state.route.selected if state.route is not None else None
    return selected if first_step(state) else None


def first_step(state: DuckState) -> bool:
    """The turn's first action step, outside any plan step: where a shortcut applies."""
    return not state.step and not state.current_step


def is_answer(message: BaseMessage) -> bool:
    """Whether an action reply is a final answer: text, and no tool calls of any kind."""
    return (
        isinstance(message, AIMessage)
        and not message.tool_calls
        and not message.invalid_tool_calls
        and bool(message.text.strip())
    )
