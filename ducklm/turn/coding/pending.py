"""Which of the last action's tool calls still wait for the coder's proposal.

Read by the router (a pending call goes to the coder node first) and by the coder node
(which proposes for exactly these), so both agree on one rule.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langchain_core.messages.tool import ToolCall

from ducklm.graph.state import DuckState
from ducklm.tools.coder_tools import CODER_TOOL_NAMES


def pending_coder_calls(state: DuckState) -> list[ToolCall]:
    """The last action's coder calls that have no proposal yet."""
    last = state.messages[-1] if state.messages else None
    if not isinstance(last, AIMessage):
        return []
    return [
        call
        for call in last.tool_calls
        if call["name"] in CODER_TOOL_NAMES and (call["id"] or "") not in state.code_proposals
    ]
