"""memory_policy: the memory_policy role says what from this turn deserves remembering.

The store and the deterministic rules that guard it (threshold, no secrets, dedup,
supersede) arrive with the memory issue; here the role's proposal is recorded in state.
Like the critic, its failure never loses the answer.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from ducklm.context import DuckContext
from ducklm.graph.state import DuckState
from ducklm.nodes.structured import review_turn

POLICY_FAILED = "The memory policy could not review this turn; the answer is not affected."


class MemoryProposal(BaseModel):
    """What the memory_policy role proposes to remember from one turn."""

    should_store: bool
    text: str = ""
    scope: Literal["global", "workspace", "conversation"] = "conversation"
    memory_type: str = "fact"
    importance: float = Field(default=0.0, ge=0.0, le=1.0)


async def decide_memory(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Ask the memory_policy role whether this turn holds something worth remembering."""
    proposal = await review_turn(state, runtime, "memory_policy", MemoryProposal, POLICY_FAILED)
    return {"memory_decisions": [proposal.model_dump()] if proposal else []}
