"""memory_policy: decide what from this turn deserves remembering, and remember it.

The memory_policy role proposes; the deterministic rules in `ducklm.turn.memory_rules`
decide (importance threshold, no secrets, duplicates update, same subject supersedes),
so a small model cannot flood memory. Like the critic, it runs after the answer has
streamed and its failure never loses the answer.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field, field_validator

from ducklm.graph.state import DuckState
from ducklm.kit.events import emit
from ducklm.memory import MemoryStore
from ducklm.turn.explicit_memory import requested_memory
from ducklm.turn.memory_rules import Neighbour, RuleDecision, decide
from ducklm.turn.prompting.structured import review_turn, unit_score

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

POLICY_FAILED = "The memory policy could not review this turn; the answer is not affected."
NOTHING = RuleDecision("skip", "the memory policy found nothing worth remembering")
NO_STORE = RuleDecision("skip", "no memory store is open")
PREFERENCE = re.compile(
    r"\b(prefer|rather|like|love|hate|favou?rite|always|never|from now on)", re.I
)


class MemoryProposal(BaseModel):
    """What the memory_policy role proposes to remember from one turn."""

    should_store: bool
    text: str = ""
    scope: Literal["global", "workspace", "conversation"] = "conversation"
    memory_type: str = "fact"
    importance: float = Field(default=0.0, ge=0.0, le=1.0)

    _on_unit_scale = field_validator("importance", mode="before")(unit_score)


async def decide_memory(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Ask the memory_policy role, apply the rules, and store what they allow.

    A fact the person asked to keep (`ducklm.turn.explicit_memory`) is proposed by rule:
    the model judges only what nobody asked for.
    """
    proposal = asked_to_keep(state.task) or await review_turn(
        state,
        runtime,
        "memory_policy",
        MemoryProposal,
        failure_message=POLICY_FAILED,
        failure_event="memory_policy_failed",
    )
    if proposal is None:
        return {"memory_decisions": []}
    memory = runtime.context.memory
    if not proposal.should_store:
        decision = NOTHING
    elif memory is None:
        decision = NO_STORE
    else:
        decision = await _decide(memory, proposal, state, runtime)
    # A refused secret is not repeated in the event, the audit log or the state.
    shown = "" if decision.reason.startswith("refused") else proposal.text
    emit(
        runtime,
        "memory_policy_decision",
        action=decision.action,
        reason=decision.reason,
        text=shown,
    )
    if memory is not None and decision.action != "skip":
        await _apply(memory, decision, proposal, state, runtime)
    return {
        "memory_decisions": [{"action": decision.action, "reason": decision.reason, "text": shown}]
    }


def asked_to_keep(task: str) -> MemoryProposal | None:
    """The proposal for a fact `task` explicitly asks to keep: for every conversation."""
    fact = requested_memory(task)
    if fact is None:
        return None
    kind = "preference" if PREFERENCE.search(fact) else "fact"
    return MemoryProposal(
        should_store=True, text=fact, scope="global", memory_type=kind, importance=1.0
    )


async def _decide(
    memory: MemoryStore, proposal: MemoryProposal, state: DuckState, runtime: Runtime[DuckContext]
) -> RuleDecision:
    near = await memory.nearest(proposal.text, **_where(state, runtime))
    neighbours = [Neighbour(h.record.id, h.record.text, h.vector_score or 0.0) for h in near]
    return decide(proposal.text, proposal.importance, neighbours)


async def _apply(
    memory: MemoryStore,
    decision: RuleDecision,
    proposal: MemoryProposal,
    state: DuckState,
    runtime: Runtime[DuckContext],
) -> None:
    if decision.action == "update" and decision.target_id:
        record = await memory.update(decision.target_id, text=proposal.text)
    else:
        record = await memory.add(
            proposal.text,
            scope=proposal.scope,
            memory_type=proposal.memory_type,
            importance=proposal.importance,
            **_where(state, runtime),
        )
        if decision.action == "supersede" and decision.target_id:
            await memory.supersede(decision.target_id, record.id)
    emit(
        runtime,
        "memory_stored",
        id=record.id,
        text=record.text,
        scope=record.scope,
        action=decision.action,
        replaces=decision.target_id,
    )


def _where(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    thread_id = runtime.execution_info.thread_id if runtime.execution_info else None
    return {"workspace": state.workspace or None, "conversation_id": thread_id}
