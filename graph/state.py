"""The graph state: small, because every superstep is checkpointed.

Per-turn switches live here rather than in the run context so that routing stays a pure
function of the state: LangGraph evaluates edges without a runtime when a client edits
the state (`update_state`, Studio, time travel).

`messages` uses a `DeltaChannel`: a checkpoint stores the new messages of its step, not
the whole list again. With the default `add_messages` channel a thread's checkpoints grow
with the square of its length (about 130 MB after 200 turns, measured here).

The turn's route, plan and coder proposals are typed (`Route`, `Plan`, `CodeProposal` /
`CoderFailure`); LangGraph's serializer checkpoints them as such. A checkpoint written
before they were typed holds plain dicts, and so does one read by a serializer that does
not allow these types (`LANGGRAPH_STRICT_MSGPACK`): `DuckState.__post_init__` turns them
into the types, so every node and edge reads attributes whichever it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.channels import DeltaChannel
from langgraph.graph.message import _messages_delta_reducer

from ducklm.tools.trust import Taint
from ducklm.turn.choosing.selector import Selection
from ducklm.turn.coding.proposals import CodeProposal, CoderFailure, Proposal, as_proposal
from ducklm.turn.planning.plans import Plan, PlanStep, StepResults, StepStatuses
from ducklm.turn.router import Route
from ducklm.turn.shortcuts import Shortcut

Messages = Annotated[list[AnyMessage], DeltaChannel(_messages_delta_reducer)]

CHECKPOINT_TYPES: tuple[type, ...] = (
    Route,
    Shortcut,
    Selection,
    Plan,
    PlanStep,
    CodeProposal,
    CoderFailure,
    Taint,
)
"""The state's own types, for a serializer's `allowed_msgpack_modules`."""


@dataclass(kw_only=True)
class InputState:
    """What a caller sends: new messages, and optionally a workspace."""

    messages: Messages = field(default_factory=list)
    """The conversation. New messages are appended; a message with a known id replaces it."""
    workspace: str = ""
    """Folder the tools work in for this thread; the configured workspace when empty."""


@dataclass(kw_only=True)
class DuckState(InputState):
    """The whole state of a thread."""

    task: str = ""
    """The current request: the text of the last human message."""
    recalled: list[dict[str, Any]] = field(default_factory=list)
    """Memories recalled for the task (filled by the memory issue)."""
    skills: list[str] = field(default_factory=list)
    """Ids of skills selected for the task."""
    observations: list[dict[str, Any]] = field(default_factory=list)
    """Short notes of this turn: tool results and problems the thinker should know about."""
    step: int = 0
    """Action steps taken in this turn."""
    final: str = ""
    """The final answer of this turn."""
    critique: dict[str, Any] | None = None
    """The critic's verdict on this turn."""
    memory_decisions: list[dict[str, Any]] = field(default_factory=list)
    """What the memory policy decided about this turn."""
    summary: str = ""
    """Running summary of history too old to send in full."""
    summary_covers: int = 0
    """How many of the oldest messages the summary stands for (they are not sent again)."""
    step_limit: int = 4
    """Action steps allowed in this turn (fixed when the turn starts)."""
    run_critic: bool = True
    """Whether the critic reviews this turn (fixed when the turn starts)."""
    run_memory_policy: bool = True
    """Whether the memory policy reviews this turn (fixed when the turn starts)."""
    review_behind: bool = False
    """The critic and memory policy run behind the answer, as a run of their own
    (`ducklm.runtime.reviews`): the turn ends at its answer. Off when no runner serves the
    graph (`langgraph dev`, Studio), where they run in the turn as before."""
    review_due: bool = False
    """The turn is answered and its review (critic, memory policy) has yet to run."""
    route: Route | None = None
    """The router's decision for this turn."""
    plan: Plan | None = None
    """The turn's plan, when the router asked for one."""
    plan_status: StepStatuses = field(default_factory=dict)
    """Each plan step's status by step id: pending, running, done, failed or skipped."""
    plan_results: StepResults = field(default_factory=dict)
    """A short result of each finished step, by step id, for later steps and the answer."""
    current_step: str = ""
    """The id of the plan step the action loop works on; empty outside a plan."""
    step_started_at: int = 0
    """Index in `messages` where the current plan step began (its messages follow)."""
    step_attempts: int = 0
    """Attempts of the current step so far (a failed step is retried once)."""
    step_feedback: str = ""
    """Why the current step's first attempt failed, for its second attempt."""
    plan_revisions: int = 0
    """How often the plan was revised this turn (once at most)."""
    code_proposals: dict[str, Proposal] = field(default_factory=dict)
    """The coder's proposed changes by tool call id, made before the write is approved,
    so a resumed run writes what the person saw instead of asking the model again."""
    mcp_tools: list[str] = field(default_factory=list)
    """The MCP tools this turn offers the action role (chosen when the turn starts)."""
    taint: Taint | None = None
    """The tool result that made this conversation untrusted: from then on nothing that is
    not read-only runs without the person. Set by the tool node, never cleared (the
    content stays in the history the model reads), so it survives restarts and resumes."""

    def review_after_answer(self) -> bool:
        """Whether the turn's answer is followed by a review run instead of its own nodes."""
        return self.review_behind and (self.run_critic or self.run_memory_policy)

    def __post_init__(self) -> None:
        # LangGraph builds the state with `DuckState(**channels)` for every node and edge,
        # so the old dict forms are read here once each, not in every reader.
        route: object = self.route
        if isinstance(route, Mapping):
            self.route = Route(**route)
        plan: object = self.plan
        if isinstance(plan, Mapping):
            self.plan = Plan.model_validate(plan)
        taint: object = self.taint
        if isinstance(taint, Mapping):
            self.taint = Taint.model_validate(taint)
        proposals = self.code_proposals
        if not all(isinstance(p, CodeProposal | CoderFailure) for p in proposals.values()):
            self.code_proposals = {k: as_proposal(p) for k, p in proposals.items()}
