"""An MCP server's sampling request served by a DuckLM role, and shown on the tool card.

A server asks DuckLM's model for a reply (`sampling/createMessage`) during a tool call;
the thinker role writes it (the role that answers the person), kept out of the answer's
token stream, its length capped. The call's card shows what was asked and what was
answered (`mcp_sampled`). Whether the person must allow it first is the call's
`CallAsks` (an untrusted server asks, `ducklm/mcp/asks.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import Runtime

from ducklm.kit.events import emit
from ducklm.mcp.asks import Sampled, Sampler, SamplingAsk
from ducklm.models.roles import RoleName

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

SAMPLING_ROLE: RoleName = "thinker"
MAX_SAMPLED_TOKENS = 1024
"""A server may ask for more; DuckLM's small models answer within this."""


def role_sampler(runtime: Runtime[DuckContext]) -> Sampler:
    """A sampler that answers with DuckLM's `SAMPLING_ROLE`."""
    models = runtime.context.models

    async def sample(ask: SamplingAsk) -> Sampled:
        client = models.chat(SAMPLING_ROLE).with_config(tags=[TAG_NOSTREAM])
        limit = max(1, min(ask.max_tokens, MAX_SAMPLED_TOKENS))
        reply = await client.ainvoke(_messages(ask), max_tokens=limit)
        return Sampled(text=reply.text, model=models.config(SAMPLING_ROLE).model)

    return sample


def sampled_event(
    runtime: Runtime[DuckContext], call_id: str, server: str, tool: str
) -> Callable[[SamplingAsk, Sampled], None]:
    """The listener that shows a served sampling request on the call's card."""

    def on_sampled(ask: SamplingAsk, sampled: Sampled) -> None:
        emit(
            runtime,
            "mcp_sampled",
            call_id=call_id,
            server=server,
            mcp_tool=tool,
            role=SAMPLING_ROLE,
            model=sampled.model,
            messages=ask.messages,
            text=sampled.text,
        )

    return on_sampled


def _messages(ask: SamplingAsk) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(ask.system_prompt)] if ask.system_prompt else []
    for item in ask.messages:
        text = item["text"]
        messages.append(AIMessage(text) if item["role"] == "assistant" else HumanMessage(text))
    return messages
