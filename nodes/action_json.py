"""The action role in json mode: a directive instead of native tool calls.

Small local models often cannot call tools natively, but with `response_format` (which
llama-server turns into a grammar) they can fill a small JSON object: one tool with its
arguments, or "answer" (`ducklm.turn.directive_schema`, one branch per tool offered), after
a few example turns. Without a grammar they still get it wrong: invalid JSON or an unknown
tool gets one repair attempt with the error shown to the model, then the turn goes on to
the thinker with a note, never a crash. Either way the step ends with `action_decided`:
the directive as written, and whether it was repaired.

The older envelope `{"reasoning", "actions": [...]}` (several calls at once) is still read,
for models that write it from the prompt alone.

When the route chose the tool by meaning (`Route.selected`), `fill_arguments` offers the
model that tool alone, under a grammar without "answer", with the nearest exemplars of
that tool as the examples; the paths it writes are resolved against the workspace's names
(`ducklm.turn.choosing.names`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import openai
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.messages.tool import ToolCall
from langgraph.runtime import Runtime

from ducklm.graph.state import DuckState
from ducklm.kit.events import emit
from ducklm.models.answer_stream import reasoning_of, working_message
from ducklm.models.clients import schema_instructions
from ducklm.models.prompts import Prompts
from ducklm.models.roles import StructuredOutput
from ducklm.tools.registry import ToolRegistry
from ducklm.turn.action_decision import report_decision
from ducklm.turn.choosing.names import Names, resolve_args, workspace_names
from ducklm.turn.choosing.selector import Selection
from ducklm.turn.directive_parse import Directive, DirectiveError, parse_directive
from ducklm.turn.directive_schema import call_schema, directive_examples, directive_schema
from ducklm.turn.planning.text import step_brief
from ducklm.turn.prompting.context_cut import Outcome, ask_uncut
from ducklm.turn.prompting.messages import RoleRequest, offered_tools, role_request
from ducklm.turn.server_found import ask_as_found

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

JSON_MODE_INSTRUCTIONS = """

Tools you can use:
{tools}

Reply with one JSON object: {{"tool": "<name>", "args": {{...}}}} to use a tool, or
{{"tool": "answer"}} when you can answer without one.
"""
REPAIR_REQUEST = (
    "Your reply could not be used: {problem}. Reply again with only the JSON object, "
    "using only the tools listed."
)
CUT_OFF = "the reply reached the output limit ({limit} tokens) before its JSON ended"
GAVE_UP_NOTE = "The action model gave no usable directive ({problem}); no tools were used."
NO_ARGUMENTS_NOTE = (
    "The action model gave no usable arguments for {tool} ({problem}); no tools were used."
)


def _directive_system(state: DuckState, ctx: DuckContext, tools: ToolRegistry) -> str:
    """The directive's system prompt for `tools`, as the action role is configured."""
    return directive_prompt(
        ctx.prompts,
        tools,
        structured_output=ctx.models.config("action").structured_output,
        workspace=state.workspace,
        max_steps=ctx.settings.max_action_steps,
    )


async def decide_with_directive(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Ask the action role for a directive; turn its actions into tool calls."""
    ctx = runtime.context

    async def prompt(shrink: bool) -> _Prompt:
        tools = offered_tools(state, ctx, shrink=shrink)
        system = _directive_system(state, ctx, tools) + step_brief(state)
        request = await role_request(state, ctx, system, role="action", shrink=shrink)
        return _Prompt(request, directive_examples(tools), tools, directive_schema(tools))

    asked = await _ask_with_repair(runtime, prompt)
    in_step = bool(state.current_step)
    update = _apply(asked.directive, runtime, in_step=in_step) if asked.directive else {}
    report_decision(
        runtime,
        mode="json",
        calls=asked.directive.calls if asked.directive else [],
        text=asked.text,
        in_step=in_step,
        repaired=asked.repaired,
        problem=asked.problem,
        usable=asked.directive is not None,
    )
    if asked.directive is None:
        note = {"note": GAVE_UP_NOTE.format(problem=asked.problem)}
        return {"observations": [*state.observations, note]}
    return update


async def fill_arguments(
    state: DuckState, runtime: Runtime[DuckContext], selected: Selection
) -> dict[str, Any]:
    """The call to the tool chosen by meaning: the model writes only its arguments."""
    ctx = runtime.context
    offered = offered_tools(state, ctx)
    tools = offered.without(n for n in offered.names if n != selected.tool)
    system = _directive_system(state, ctx, tools)
    examples = _nearest_examples(ctx, selected)

    async def prompt(shrink: bool) -> _Prompt:
        # Smaller history only: the one tool offered is the request's point.
        request = await role_request(state, ctx, system, role="action", shrink=shrink)
        return _Prompt(request, examples, tools, call_schema(tools))

    asked = await _ask_with_repair(runtime, prompt)
    calls = asked.directive.calls if asked.directive else []
    if calls:
        names = await asyncio.to_thread(workspace_names, Path(state.workspace))
        calls = [_resolved(c, state.task, names) for c in calls]
    report_decision(
        runtime,
        mode="json",
        calls=calls,
        text=asked.text,
        in_step=False,
        repaired=asked.repaired,
        problem=asked.problem,
        usable=bool(calls),
    )
    if not calls:
        problem = asked.problem or "no call"
        note = {"note": NO_ARGUMENTS_NOTE.format(tool=selected.tool, problem=problem)}
        return {"observations": [*state.observations, note]}
    return {"messages": [AIMessage(content="", tool_calls=calls)]}


def _resolved(call: ToolCall, request: str, names: Names) -> ToolCall:
    args = resolve_args(call["name"], call["args"], request, names)
    return ToolCall(name=call["name"], args=args, id=call["id"], type="tool_call")


def _nearest_examples(ctx: DuckContext, selected: Selection) -> list[BaseMessage]:
    """The chosen tool's nearest exemplars as request/call turns, the nearest last."""
    messages: list[BaseMessage] = []
    for request in reversed(selected.examples):
        exemplar = ctx.selector.exemplar(request)
        if exemplar is not None:
            call = {"tool": exemplar.tool, "args": exemplar.args}
            messages += [HumanMessage(request), AIMessage(json.dumps(call))]
    return messages


def directive_prompt(
    prompts: Prompts,
    tools: ToolRegistry,
    *,
    structured_output: StructuredOutput,
    workspace: str,
    max_steps: int,
) -> str:
    """The action role's system prompt in json mode: its prompt file plus the directive format."""
    text = prompts.render("action", workspace=workspace, max_steps=max_steps)
    text += JSON_MODE_INSTRUCTIONS.format(tools=tools.describe())
    if structured_output == "prompt":
        text += "\n" + schema_instructions(directive_schema(tools))
    return text


@dataclass(frozen=True)
class Asked:
    """What asking for a directive, with its one repair round, came to."""

    directive: Directive | None
    """`None`: no usable directive."""
    text: str
    """The last reply as the model wrote it ("" when it was cut off)."""
    problem: str
    """Why the first reply could not be used (or, without a directive, the last); ""."""
    repaired: bool
    """The directive is the answer to the repair request."""


@dataclass(frozen=True)
class _Prompt:
    """One directive request: packed (`shrink`: smaller), and what it offers."""

    request: RoleRequest
    examples: list[BaseMessage]
    """Example turns, between the system prompt and the history."""
    tools: ToolRegistry
    schema: dict[str, Any]

    @property
    def messages(self) -> list[BaseMessage]:
        system_message, *history = self.request.messages
        return [system_message, *self.examples, *history]


async def _ask_with_repair(
    runtime: Runtime[DuckContext], prompt: Callable[[bool], Awaitable[_Prompt]]
) -> Asked:
    """Ask for a directive; an unusable one goes back once with its problem.

    The first request is asked again smaller when the server cut it (`ask_uncut`).
    """
    ctx = runtime.context

    async def first(shrink: bool) -> Outcome[tuple[_Prompt, str | None, Directive | str]]:
        packed = await prompt(shrink)
        reply, text, directive = await _ask(ctx, packed.messages, packed.tools, packed.schema)
        _show_reasoning(runtime, reply)
        return Outcome(packed.request, reply, (packed, text, directive))

    packed, text, directive = await ask_uncut(runtime, "action", first)
    messages, problem = packed.messages, ""
    for attempt in range(2):
        if attempt:
            reply, text, directive = await _ask(ctx, messages, packed.tools, packed.schema)
            _show_reasoning(runtime, reply)
        if isinstance(directive, Directive):
            return Asked(directive, text or "", problem, repaired=attempt > 0)
        problem = directive
        if text is None:  # cut at the output limit: asking again would be cut again
            break
        messages = [
            *messages,
            AIMessage(content=text),
            HumanMessage(REPAIR_REQUEST.format(problem=problem)),
        ]
    return Asked(None, text or "", problem, repaired=False)


async def _ask(
    ctx: DuckContext, messages: list[Any], tools: ToolRegistry, schema: dict[str, Any]
) -> tuple[BaseMessage | None, str | None, Directive | str]:
    """The reply, its text and its directive, or the problem with it (text `None`: cut off)."""
    name = "action_directive" if schema["title"] == "ActionDirective" else "tool_call"
    limit = ctx.models.config("action").max_output_tokens
    try:
        reply = await ask_as_found(
            ctx, "action", lambda: ctx.models.json_client("action", name, schema).ainvoke(messages)
        )
    except openai.LengthFinishReasonError:  # the openai library parses response_format replies
        return None, None, CUT_OFF.format(limit=limit)
    if reply.response_metadata.get("finish_reason") == "length":
        return reply, None, CUT_OFF.format(limit=limit)
    text = reply.text
    try:
        return reply, text, parse_directive(text, tools)
    except DirectiveError as exc:
        return reply, text, str(exc)


def _show_reasoning(runtime: Runtime[DuckContext], reply: BaseMessage | None) -> None:
    """The reasoning a model wrote before its JSON, shown as the streamed roles' is.

    (A reasoning model's, parted from the JSON by the wire reader.)
    """
    if thought := reasoning_of(reply):
        emit(runtime, "reasoning", text=thought, source="action")


def _apply(directive: Directive, runtime: Runtime[DuckContext], *, in_step: bool) -> dict[str, Any]:
    if directive.reasoning:
        emit(runtime, "reasoning", text=directive.reasoning, source="action")
    if not directive.calls:
        # Inside a plan step, a directive without actions ends the step: its reasoning
        # is the step's result, kept in the transcript for the review and later steps.
        if in_step and directive.reasoning.strip():
            step_result = AIMessage(content=directive.reasoning.strip())
            return {"messages": [working_message(step_result)]}
        return {}
    return {"messages": [AIMessage(content="", tool_calls=directive.calls)]}
