"""A model call whose server cut the prompt: found, said in an event, and learned from.

After each call of the action role and the thinker the node compares what the server
says it read with what DuckLM sent (`ducklm.models.prompt_usage.was_cut`). A cut is never
gone on with in silence: a `context_cut` event says what was sent, what was seen and the
window DuckLM believed in; the server's window is lowered to what it kept, so every later
request fits it (the context node then folds the history that no longer fits into the
summary); and the call is made once more, packed smaller, unless its answer has already
reached the person. `ask_uncut` is that loop, for any call that can be packed smaller.

Only a cut DuckLM can trust is acted on (`ducklm.models.prompt_usage.judge_read`): a
usage count lower than the prompt is a cut only once the server has said about the same
count before. The window learned never drops below what the request needs, and a request
that does not fit the window even so is packed smaller first (`context_shrunk`), then
refused with words that name the window and how to raise it (`WindowTooSmall`), never
as an internal error.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.messages.ai import add_ai_message_chunks
from langgraph.runtime import Runtime

from ducklm.kit.events import emit
from ducklm.models.context_size import ServedContext, WindowTooSmall, window_for
from ducklm.models.prompt_usage import judge_read, least_read, prompt_seen
from ducklm.models.roles import RoleName
from ducklm.models.tokens import ServerTokenizer
from ducklm.models.wire import PROMPT_KEY, PromptRead
from ducklm.turn.prompting.budget import ContextBudgetError
from ducklm.turn.server_found import learn_from_reply

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext
    from ducklm.turn.prompting.messages import RoleRequest

log = logging.getLogger(__name__)
R = TypeVar("R")

CutAction = Literal["retried_smaller", "next_smaller", "none"]
"""What DuckLM did: made the call again packed smaller; could not (the answer had
streamed), so only later calls are smaller; or nothing more (the retry was cut too)."""


@dataclass(frozen=True)
class ContextCut:
    """One call the server cut."""

    role: RoleName
    sent: int
    """DuckLM's count of the request."""
    seen: PromptRead
    served: ServedContext
    """The window DuckLM packed for."""
    needed: int = 0
    """The smallest window the request fits (`window_for` its essentials and tools)."""

    def fields(self, action: CutAction) -> dict[str, Any]:
        """The `context_cut` event's fields."""
        return {
            "role": self.role,
            "sent": self.sent,
            "seen": self.seen.tokens,
            "truncated": self.seen.truncated,
            "evidence": "truncated" if self.seen.truncated else self.seen.basis,
            "served_context": self.served.tokens,
            "served_source": self.served.source,
            "action": action,
        }


async def find_cut(
    ctx: DuckContext, role: RoleName, request: RoleRequest, reply: BaseMessage
) -> ContextCut | None:
    """The cut the server made of `request`, if it made one (`reply` says what it read)."""
    config = ctx.models.config(role)
    served = await ctx.context_sizes.window(config, ctx.settings.ctx_size)
    seen = prompt_seen(reply)
    exact = isinstance(ctx.tokens, ServerTokenizer)
    least = least_read(request.tokens, request.tools_tokens, exact_count=exact)
    messages = least_read(request.tokens, 0, exact_count=exact)
    verdict = judge_read(least, seen, served, messages=messages)
    low = seen.tokens or 0
    if verdict == "low" and not ctx.context_sizes.low_count(config, low, request.sent):
        log.info(
            "the %s role's server counted %s of %s prompt tokens: not trusted as a cut "
            "until it says so again", role, seen.tokens, request.sent,
        )  # fmt: skip
        return None
    if verdict == "read":
        return None
    needed = window_for(request.needed, config.max_output_tokens)
    return ContextCut(role, request.sent, seen, served, needed)


@dataclass(frozen=True)
class Outcome(Generic[R]):
    """One call as `ask_uncut` needs it: what was sent, what the server said, the result."""

    request: RoleRequest
    said: BaseMessage | None
    """The reply, or the chunks that say what the server read (`prompt_report`)."""
    result: R
    spoken: bool = False
    """Its answer already streamed to the person."""


async def ask_uncut(
    runtime: Runtime[DuckContext], role: RoleName, ask: Callable[[bool], Awaitable[Outcome[R]]]
) -> R:
    """`ask(shrink=False)`'s result, or when the server cut its prompt, `ask(shrink=True)`'s.

    The cut is reported either way (`retry_after_cut`); the smaller call is not made when
    the first one's answer already reached the person.
    """
    for shrink in (False, True):
        try:
            asked = await ask(shrink)
        except ContextBudgetError as exc:
            await _no_room(runtime, role, exc, shrunk=shrink)
            continue
        said = asked.said
        learn_from_reply(runtime.context, role, said)
        cut = await find_cut(runtime.context, role, asked.request, said) if said else None
        if cut is None or not retry_after_cut(runtime, cut, shrunk=shrink, spoken=asked.spoken):
            break
    if asked.spoken:
        report_usage(runtime, role, said)
    return asked.result


async def _no_room(
    runtime: Runtime[DuckContext], role: RoleName, exc: ContextBudgetError, *, shrunk: bool
) -> None:
    """A request with no room in the window: say it is packed smaller; if it was, refuse.

    Raises:
        WindowTooSmall: Even packed smaller, it does not fit.
    """
    ctx = runtime.context
    config = ctx.models.config(role)
    served = await ctx.context_sizes.window(config, ctx.settings.ctx_size)
    if shrunk:
        raise WindowTooSmall(role, served, window_for(exc.essential, config.max_output_tokens))
    fields = {"served_context": served.tokens, "served_source": served.source}
    log.warning("no room in the %s role's window of %s tokens: packed smaller", role, served.tokens)
    emit(runtime, "context_shrunk", role=role, **fields)


def report_usage(runtime: Runtime[DuckContext], role: RoleName, said: BaseMessage | None) -> None:
    """Say which model spoke the answer and what the server counted (`model_usage`).

    Only for a call whose answer streamed to the person: the runner joins it with the
    answer's timing into `answer_facts`. Counts are `None` when the server sent no usage.
    """
    usage = getattr(said, "usage_metadata", None) or {}
    emit(
        runtime,
        "model_usage",
        role=role,
        model=runtime.context.models.config(role).model,
        output_tokens=usage.get("output_tokens"),
        input_tokens=usage.get("input_tokens"),
    )


def prompt_report(chunks: Iterable[AIMessageChunk]) -> AIMessageChunk | None:
    """A stream's chunks that say how much of the prompt the server read, merged.

    Only those (the wire reader's last chunk, `ducklm.models.wire_chat`): merging every
    chunk of a long answer again would cost more than reading it.
    """
    said = [c for c in chunks if c.usage_metadata or PROMPT_KEY in c.response_metadata]
    return add_ai_message_chunks(*said) if said else None


def retry_after_cut(
    runtime: Runtime[DuckContext], cut: ContextCut, *, shrunk: bool, spoken: bool
) -> bool:
    """Report `cut`; whether to make the call again, packed smaller.

    Args:
        runtime: The node's runtime (events, the window to lower).
        cut: What the server cut.
        shrunk: The call was already the smaller one: it is not made a third time.
        spoken: Its answer already streamed to the person, who has it.
    """
    action: CutAction = "none" if shrunk else "next_smaller" if spoken else "retried_smaller"
    report_cut(runtime, cut, action)
    return action == "retried_smaller"


def report_cut(runtime: Runtime[DuckContext], cut: ContextCut, action: CutAction) -> None:
    """Say so (`context_cut`), and lower the server's window to what it kept."""
    ctx = runtime.context
    if cut.seen.tokens:
        ctx.context_sizes.learn(ctx.models.config(cut.role), cut.seen.tokens, needed=cut.needed)
    log.warning(
        "the model server cut the %s role's prompt: %s of %s tokens read (%s)",
        cut.role, cut.seen.tokens, cut.sent, action,
    )  # fmt: skip
    emit(runtime, "context_cut", **cut.fields(action))
