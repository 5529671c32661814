"""Asking a role for JSON, the same way for every role that needs structure."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import openai
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, ValidationError

from ducklm.config.yaml_files import validation_details
from ducklm.graph.state import DuckState
from ducklm.kit.events import EventType, emit
from ducklm.models.clients import schema_instructions
from ducklm.models.roles import RoleName
from ducklm.models.tokens import estimate_tokens, fit_head_tail
from ducklm.turn.prompting.cut_json import close_cut_json
from ducklm.turn.prompting.transcript import transcript_text
from ducklm.turn.server_found import ask_as_found

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

M = TypeVar("M", bound=BaseModel)
CUT = "\n[... cut to fit the input budget ...]\n"
REVIEW_FAILED = "{message} Why: {reason}. Later failures in this conversation are only logged."
CUT_OFF = "the reply was cut off at the output limit ({limit} tokens)"
RETRY = (
    "Your reply could not be used: {problem}. Reply again with the complete JSON: every text "
    "one short sentence, nothing repeated."
)
ECHO_CHARS = 400
"""How much of an unusable reply the retry shows the model (a repetition is no help)."""
log = logging.getLogger(__name__)


class JSONReplyError(ValueError):
    """A model's reply is not the JSON asked for; the message is shown to it for repair."""


class CutReplyError(JSONReplyError):
    """A reply cut at the output limit that could not be closed into JSON."""


class Reply(NamedTuple):
    """A role's JSON reply: its text, its value, and whether it was cut and closed here."""

    text: str
    value: Any
    cut: bool = False


def system_prompt(ctx: DuckContext, role: RoleName, schema: dict[str, Any], **fields: Any) -> str:
    """The role's system prompt, with the schema spelled out when the server cannot enforce it."""
    text = ctx.prompts.render(role, **fields)
    if ctx.models.config(role).structured_output == "prompt":
        text += "\n\n" + schema_instructions(schema)
    return text


async def ask_json(
    ctx: DuckContext,
    role: RoleName,
    name: str,
    schema: dict[str, Any],
    messages: Sequence[BaseMessage],
) -> tuple[str, Any]:
    """Call `role` for JSON following `schema`; return the raw text and the parsed value.

    A reply cut at the output limit is closed where it was cut (`close_cut_json`).

    Raises:
        JSONReplyError: The reply is not JSON (`CutReplyError`: a cut one that could
            not be closed).
    """
    reply = await _ask_json(ctx, role, name, schema, messages)
    return reply.text, reply.value


async def _ask_json(
    ctx: DuckContext,
    role: RoleName,
    name: str,
    schema: dict[str, Any],
    messages: Sequence[BaseMessage],
) -> Reply:
    try:
        reply = await ask_as_found(
            ctx, role, lambda: ctx.models.json_client(role, name, schema).ainvoke(list(messages))
        )
    except openai.LengthFinishReasonError as exc:  # openai parses json_schema replies itself
        return _closed(ctx, role, _cut_text(exc))
    text = reply.text
    if reply.response_metadata.get("finish_reason") == "length":
        return _closed(ctx, role, text)
    return Reply(text, parse_json(text))


def _cut_text(exc: openai.LengthFinishReasonError) -> str:
    choices = exc.completion.choices
    return (choices[0].message.content or "") if choices else ""


def _closed(ctx: DuckContext, role: RoleName, text: str) -> Reply:
    value = close_cut_json(text)
    if value is None:
        raise CutReplyError(CUT_OFF.format(limit=ctx.models.config(role).max_output_tokens))
    log.info("%s's reply was cut at the output limit and closed", role)
    return Reply(text, value, cut=True)


def parse_json(text: str) -> Any:
    """Parse a model's JSON reply, tolerating a Markdown code fence around it.

    Raises:
        JSONReplyError: The text is not JSON.
    """
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body.removeprefix("json").strip()
    try:
        # strict=False: a raw newline or tab inside a string (llama-cpp-python's grammar
        # lets SmolLM2 write them) is still the model's meaning, not a reason to lose it.
        return json.loads(body, strict=False)
    except json.JSONDecodeError as exc:
        raise JSONReplyError(f"the reply is not valid JSON ({exc.msg} at char {exc.pos})") from None


def unit_score(value: Any) -> Any:
    """A model's score read on the 0-1 scale the schema asks for.

    Small models write scores out of 10 or 100 whatever the schema says (SmolLM2's critic
    wrote 10 on most turns, and the whole review was lost to the range check). A number
    above 1 is read as out of 10, above 10 as out of 100; anything else is left for the
    model's own validation to judge.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    for scale in (1, 10, 100):
        if 0 <= value <= scale:
            return value / scale
    return value


def with_system(text: str, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """`messages` behind a system message."""
    return [SystemMessage(content=text), *messages]


async def ask_validated(
    ctx: DuckContext, role: RoleName, model: type[M], messages: Sequence[BaseMessage]
) -> M:
    """Call `role` for JSON shaped like the pydantic `model` and validate the reply.

    A reply cut at the output limit is closed where it was cut. A reply that is no JSON,
    or does not fit `model`, is asked for once more with the problem shown (and the
    start of the reply); only the second one's failure counts.

    Raises:
        JSONReplyError: The reply is not JSON.
        pydantic.ValidationError: The JSON does not fit `model`.
    """
    name, schema = model.__name__, model.model_json_schema()
    said = ""
    try:
        reply = await _ask_json(ctx, role, name, schema, messages)
        said = reply.text
        return model.model_validate(reply.value)
    except ValidationError as exc:
        problem = f"it did not fit ({validation_details(exc)})"
    except JSONReplyError as exc:
        problem = str(exc)
    log.info("%s's reply could not be used (%s); asked once more", role, problem)
    echo = [AIMessage(content=said[:ECHO_CHARS])] if said.strip() else []
    retry = [*messages, *echo, HumanMessage(content=RETRY.format(problem=problem))]
    return model.model_validate((await _ask_json(ctx, role, name, schema, retry)).value)


async def review_turn(
    state: DuckState,
    runtime: Runtime[DuckContext],
    role: RoleName,
    model: type[M],
    *,
    failure_message: str,
    failure_event: EventType = "error",
) -> M | None:
    """Ask `role` to review this turn's transcript and answer like `model`.

    Used after the answer has streamed, so a failure must never fail the run: it is
    logged with its reason, gives `None`, and the first failure of `role` in a
    conversation becomes a non-fatal `error` event with `failure_message` and the reason
    (a reviewer that fails on a small model fails most turns; saying so each time would
    bury the answers).
    """
    ctx = runtime.context
    system = system_prompt(ctx, role, model.model_json_schema(), workspace=state.workspace)
    room = ctx.settings.max_input_tokens - estimate_tokens(system) - 64
    transcript = fit_head_tail(transcript_text(state.messages), room, estimate_tokens, CUT)
    messages = with_system(system, [HumanMessage(content=transcript)])
    try:
        return await ask_validated(ctx, role, model, messages)
    except Exception as exc:  # the answer is already out; a broken reviewer must not fail the run
        reason = failure_reason(exc)
        log.warning("%s could not review the turn: %s", role, reason, exc_info=True)
        thread = runtime.execution_info.thread_id if runtime.execution_info else None
        if ctx.notices.first(("review failed", role, thread)):
            message = REVIEW_FAILED.format(message=failure_message, reason=reason)
            emit(runtime, failure_event, stage=role, fatal=False, message=message)
        return None


def failure_reason(exc: Exception) -> str:
    """Why a role's JSON reply could not be used, in words a person can read."""
    if isinstance(exc, ValidationError):
        return f"its reply did not fit ({validation_details(exc)})"
    if isinstance(exc, JSONReplyError):
        return str(exc)
    return f"the model call failed ({type(exc).__name__})"
