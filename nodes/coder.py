"""coder: the coder role writes the new content for the action's coder tool calls.

It runs between the action and the tool node, so its proposals are checkpointed before
the tool node can pause for approval: LangGraph re-runs an interrupted node from its
top, and the coder role would otherwise answer again, differently, after the person had
approved the first answer. Each proposal is a `code_proposed` event with its diff; the
tool node shows the diff in the approval request and writes exactly that content.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.messages.tool import ToolCall
from langgraph.runtime import Runtime

from ducklm.graph.state import DuckState
from ducklm.kit.events import emit
from ducklm.models.errors import describe
from ducklm.tools.errors import ToolError
from ducklm.turn.coding.coder import CoderError, propose_change
from ducklm.turn.coding.pending import pending_coder_calls
from ducklm.turn.coding.proposals import CoderFailure, CoderOp, Proposal

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

OPS: dict[str, tuple[CoderOp, str]] = {
    "generate_code": ("generate", "instructions"),
    "fix_code": ("fix", "error"),
    "refactor_code": ("refactor", "instructions"),
}
BAD_CALL = "{tool} needs a text 'path' and a text '{field}'"
CODER_FAILED = "the coder role failed: {reason}"

log = logging.getLogger(__name__)


async def propose_code(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """A proposal (or the reason there is none) for every pending coder call."""
    proposals = dict(state.code_proposals)
    for call in pending_coder_calls(state):
        call_id = call["id"] or ""
        proposal = await _propose(call, state, runtime)
        proposals[call_id] = proposal
        emit(
            runtime, "code_proposed", call_id=call_id, tool=call["name"], **proposal.event_fields()
        )
    return {"code_proposals": proposals}


async def _propose(call: ToolCall, state: DuckState, runtime: Runtime[DuckContext]) -> Proposal:
    op, field = OPS[call["name"]]
    path, text = call["args"].get("path"), call["args"].get(field)
    if not isinstance(path, str) or not isinstance(text, str):
        return CoderFailure(error=BAD_CALL.format(tool=call["name"], field=field))
    try:
        return await propose_change(
            runtime.context, op, path, text, workspace=Path(state.workspace)
        )
    except (CoderError, ToolError) as exc:  # messages written for the action role
        return CoderFailure(path=path, error=str(exc))
    except Exception as exc:  # a model failure becomes the call's error, not the run's
        log.warning("the coder role failed", exc_info=True)
        return CoderFailure(path=path, error=CODER_FAILED.format(reason=describe(exc)))
