"""The turn's first superstep as one node: route, context and recall, side by side.

The three read the same state (the request) and write disjoint fields, and nothing
downstream starts before all three have ended, so LangGraph would gain nothing from
running them as three tasks of one superstep, and it charges per task: a task of its own,
a state built for it, and a batch of checkpoint writes each (docs/architecture.md,
"One task starts a turn", has the measurements). They still run concurrently (a model
call in one does not hold up the others), as asyncio tasks.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from langgraph.runtime import Runtime

from ducklm.graph.state import DuckState
from ducklm.nodes.context import prepare_turn
from ducklm.nodes.recall import recall_memories
from ducklm.nodes.route import decide_turn_route
from ducklm.turn.server_found import find_servers

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

PARTS = (decide_turn_route, prepare_turn, recall_memories)
"""What starts a turn, in the order their updates are merged (they share no field)."""


async def start_turn(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Route the turn, prepare its context and recall memories, concurrently.

    Before them, the model servers' capabilities (probed at the first turn only).

    Raises:
        Exception: The first failure of the three, as that node raised it (the others
            are cancelled), so the run's error message is the one that node gives.
        ValueError: Two of them wrote the same field (a programming error).
    """
    # What the servers accept decides how the roles ask them (tools natively or as JSON
    # directives): found first, so every part of the turn asks the same way.
    await find_servers(runtime)
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(part(state, runtime)) for part in PARTS]
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None
    merged: dict[str, Any] = {}
    for task in tasks:
        update = task.result()
        if shared := merged.keys() & update.keys():
            raise ValueError(f"the turn's first nodes both wrote {sorted(shared)}")
        merged |= update
    return merged
