"""The run service's side of episodes: a finished turn's messages, and a full reindex.

The facade hands every ended run's thread to an `EpisodeWriter` (behind the turn); the
writer reads the thread's messages and workspace from the checkpoint with `turn_loader`.
`reindex_conversations` rebuilds the episodes of every conversation from the
checkpoints, for `ducklm memory reindex`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langchain_core.messages import AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from ducklm.graph.builder import DuckGraph
from ducklm.memory.episodes import LoadTurn, episodes_of, index_new
from ducklm.memory.store import MemoryStore
from ducklm.stores import Conversations, TaskRecord, Tasks

CONVERSATIONS_LIMIT = 100_000


def turn_loader(graph: DuckGraph, default_workspace: str) -> LoadTurn:
    """Reads a conversation's messages and workspace from its latest checkpoint."""

    async def load(conversation_id: str) -> tuple[Sequence[AnyMessage], str]:
        config: RunnableConfig = {"configurable": {"thread_id": conversation_id}}
        values = (await graph.aget_state(config)).values
        return values.get("messages", []), values.get("workspace") or default_workspace

    return load


async def reindex_conversations(
    store: MemoryStore,
    load: LoadTurn,
    conversations: Conversations,
    tasks: Tasks,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Index every conversation's messages not yet indexed, then rebuild the indexes.

    A message indexed now is dated by the task it started (a person's message) or
    followed (the answer), from the `tasks` table: checkpoints carry no message times.
    Returns how many episodes there are.
    """
    threads = await conversations.list(limit=CONVERSATIONS_LIMIT)
    for done, conversation in enumerate(threads, start=1):
        messages, workspace = await load(conversation.id)
        dated = _dates(messages, await tasks.list(conversation.id, limit=CONVERSATIONS_LIMIT))
        items = episodes_of(
            messages,
            conversation_id=conversation.id,
            workspace=workspace,
            said_at=_dater(dated, conversation.updated_at),
        )
        await index_new(store, items)
        if progress is not None:
            progress(done, len(threads))
    return await store.reindex()


def _dater(dated: dict[str, float], fallback: float) -> Callable[[AnyMessage], float]:
    return lambda message: dated.get(message.id or "", fallback)


def _dates(messages: Sequence[AnyMessage], tasks: Sequence[TaskRecord]) -> dict[str, float]:
    """When each message was said: its task's start, matched in order by the request."""
    starts = sorted(tasks, key=lambda t: t.created_at)
    dated: dict[str, float] = {}
    at: float | None = None
    for message in messages:
        if isinstance(message, HumanMessage):
            match = next((t for t in starts if t.message == message.text), None)
            if match is not None:
                starts.remove(match)
                at = match.created_at
        if at is not None and message.id:
            dated[message.id] = at
    return dated
