"""The answering nodes, wrapped: a direct answer first, and a check on every final answer.

`answer_directly(node)`: when a rule answers the request (`ducklm.turn.answers.ruled`) or
the turn's one tool result is the answer (`ducklm.turn.answers.direct`), that is streamed
as the answer and the node is not called.

`checked_answer(node, templates)`: the answer the node sets (`final`, and its message) is
cleaned of DuckLM's own prompt text (`ducklm.turn.answers.scaffolding`). For a model that
writes JSON directives (the small local models, which copy their prompts) the streamed
tokens are held back to the end of each sentence and cleaned the same way before they go
out; other models stream as they come (holding back would delay the first token), and
their final answer is still cleaned. Without DuckLM's runner (Studio) tokens go to
LangGraph's stream unchecked.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime

from ducklm.graph.state import DuckState
from ducklm.kit.events import TokenSender, emit
from ducklm.turn.answers.direct import direct_answer
from ducklm.turn.answers.ruled import ruled_answer
from ducklm.turn.answers.scaffolding import (
    BUNDLED,
    Scaffolding,
    complete_prefix,
    normalise,
    segments,
)

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

Node = Callable[[DuckState, Runtime["DuckContext"]], Awaitable[dict[str, Any]]]
NOTHING_LEFT = "(The model's answer only repeated DuckLM's instructions.)"


def answer_directly(node: Node) -> Node:
    """`node`, unless the turn's tool result is the answer: then that, streamed."""

    @functools.wraps(node)
    async def answer(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
        text = await ruled_answer(state, runtime.context) or direct_answer(state)
        if text is None:
            return await node(state, runtime)
        await TokenSender(runtime).send(text)
        # No model spoke it: the answer's facts name none (`ducklm.runtime.answer_facts`).
        emit(runtime, "model_usage", role="tool", model="", output_tokens=None, input_tokens=None)
        return {
            "messages": [AIMessage(content=text)],
            "final": text,
            "review_due": state.review_after_answer(),
        }

    return answer


def checked_answer(node: Node, templates: Iterable[str] = ()) -> Node:
    """`node` with its answer (and, for small models, its stream) cleaned of scaffolding."""
    bundled = BUNDLED.plus(templates)

    @functools.wraps(node)
    async def checked(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
        ctx = runtime.context
        # Built only when there is text to check: most action steps have none.
        check = functools.cache(lambda: (bundled.plus(_turn_texts(state, ctx)), _said(state)))
        gate = None
        if ctx.events is not None and ctx.models.config("action").tool_mode == "json":
            gate = TokenGate(ctx.events, check)
            runtime = dataclasses.replace(runtime, context=dataclasses.replace(ctx, events=gate))
        try:
            update = await node(state, runtime)
        finally:
            if gate is not None:
                gate.flush()
        final = update.get("final")
        if not isinstance(final, str) or not final:
            return update
        scaffolding, allowed = check()
        clean = scaffolding.clean(final, allowed) or NOTHING_LEFT
        if clean == final.strip():
            return update
        return {**update, "final": clean, "messages": _with_text(update.get("messages"), clean)}

    return checked


class TokenGate:
    """An event sink that holds `token` text to the end of each sentence and cleans it."""

    def __init__(
        self, sink: Callable[[dict[str, Any]], None], check: Callable[[], tuple[Scaffolding, str]]
    ) -> None:
        self._sink = sink
        self._check = check
        self._held = ""
        self._last: dict[str, Any] | None = None

    def __call__(self, event: dict[str, Any]) -> None:
        """Take one event: a token's text is held, any other event sends what is held first."""
        if event.get("type") != "token":
            self.flush()
            self._sink(event)
            return
        self._held += str(event.get("text", ""))
        self._last = event
        done = complete_prefix(self._held)
        if done:
            self._send(self._held[:done])
            self._held = self._held[done:]

    def flush(self) -> None:
        """Send what is held (the stream ended, or another event comes)."""
        if self._held:
            self._send(self._held)
            self._held = ""

    def _send(self, text: str) -> None:
        scaffolding, allowed = self._check()
        said = _normalised(allowed)
        kept = "".join(scaffolding.kept(piece, said) for piece in segments(text))
        if kept and self._last is not None:
            self._sink({**self._last, "text": kept})


@functools.lru_cache(maxsize=4)
def _normalised(allowed: str) -> str:
    return normalise(allowed)


def _turn_texts(state: DuckState, ctx: DuckContext) -> list[str]:
    """The turn's own prompt text: its skills, its notes, the tools' descriptions."""
    skills = [s.render() for s in map(ctx.skills.get, state.skills) if s is not None]
    notes = [str(o["note"]) for o in state.observations if o.get("note")]
    return [*skills, *notes, ctx.tools.describe()]


def _said(state: DuckState) -> str:
    """What the person and the tools said: words from there are no scaffolding."""
    return "\n".join(m.text for m in state.messages if isinstance(m, HumanMessage | ToolMessage))


def _with_text(messages: Any, text: str) -> list[Any]:
    found = list(messages or [])
    for i in range(len(found) - 1, -1, -1):
        if isinstance(found[i], AIMessage):
            found[i] = found[i].model_copy(update={"content": text})
            break
    return found
