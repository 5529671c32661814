"""Reading a thread's checkpointed states: the latest, one checkpoint, the history.

One reader serves the facade (`DuckLM.snapshot`, `DuckLM.history`, for every door) and
`ducklm history`, which opens only the checkpointer (`ducklm.runtime.operator`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: `ducklm threads` imports this without LangGraph
    from langchain_core.runnables import RunnableConfig
    from langgraph.types import StateSnapshot

    from ducklm.graph.builder import DuckGraph


class StateReader:
    """The states of the threads `graph` checkpoints."""

    def __init__(self, graph: DuckGraph) -> None:
        self._graph = graph

    @property
    def graph(self) -> DuckGraph:
        """The compiled graph the states are read through."""
        return self._graph

    async def snapshot(self, thread_id: str, checkpoint_id: str | None = None) -> StateSnapshot:
        """The thread's state (at `checkpoint_id`, else the latest): values, next, interrupts."""
        return await self._graph.aget_state(thread_config(thread_id, checkpoint_id))

    async def history(
        self,
        thread_id: str,
        *,
        checkpoint_id: str | None = None,
        before: str | None = None,
        metadata: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> list[StateSnapshot]:
        """The thread's states, newest first (from `checkpoint_id`, older than `before`)."""
        return [
            snapshot
            async for snapshot in self._graph.aget_state_history(
                thread_config(thread_id, checkpoint_id),
                filter=metadata,
                before=thread_config(thread_id, before) if before else None,
                limit=limit,
            )
        ]


def thread_config(thread_id: str, checkpoint_id: str | None = None) -> RunnableConfig:
    """LangGraph's config for a thread, at one checkpoint when `checkpoint_id` is given."""
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if checkpoint_id:
        configurable.update(checkpoint_id=checkpoint_id, checkpoint_ns="")
    return {"configurable": configurable}
