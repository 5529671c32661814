"""Threads are DuckLM's conversations: one thread = one conversation, whichever door.

A conversation started in the web chat, the CLI or `/v1` is a thread here (with the
graph's metadata); a thread created here is a conversation there (`ducklm threads`,
`/v1/conversations`). Its status comes from DuckLM's own records: busy while the hub
holds it, error after its last task failed, interrupted while the graph has steps left.
"""

from __future__ import annotations

from typing import Any

from ducklm.runtime.facade import DuckLM
from ducklm.server.agent_protocol.common.identity import ASSISTANT_ID, GRAPH_ID
from ducklm.server.agent_protocol.common.views import thread_view
from ducklm.server.tasks import TaskHub
from ducklm.stores import Conversation
from ducklm.stores.agent_protocol.threads import ThreadRecord, ThreadStore

GRAPH_METADATA = {"graph_id": GRAPH_ID, "assistant_id": ASSISTANT_ID}
"""What a thread's metadata says before a client set any (a `/v1` conversation's)."""
MAX_LISTED = 10_000
FAILED = "RunFailed"


async def find_thread(thread_id: str, duck: DuckLM, threads: ThreadStore) -> ThreadRecord | None:
    """The thread `thread_id`, or `None` when no conversation has that id."""
    conversation = await duck.conversations.get(thread_id)
    if conversation is None:
        return None
    return _record(conversation, await threads.get(thread_id))


async def all_threads(duck: DuckLM, threads: ThreadStore) -> list[ThreadRecord]:
    """Every thread, most recently updated first."""
    metadata = await threads.all()
    listed = await duck.conversations.list(limit=MAX_LISTED)
    return [_record(c, metadata.get(c.id)) for c in listed]


async def create_thread(
    thread_id: str, metadata: dict[str, Any], duck: DuckLM, threads: ThreadStore
) -> ThreadRecord | None:
    """A new, empty conversation with `metadata`; `None` when `thread_id` exists."""
    if await duck.conversations.get(thread_id) is not None:
        return None
    conversation = await duck.conversations.create(thread_id)
    await threads.merge(thread_id, metadata)
    return _record(conversation, metadata)


async def load_view(record: ThreadRecord, duck: DuckLM, hub: TaskHub) -> dict[str, Any]:
    """The thread as the LangGraph server shows it, state read from the checkpointer."""
    thread_id = record.thread_id
    snapshot = await duck.states.snapshot(thread_id)
    latest = await duck.tasks(thread_id, limit=1)
    failure = None
    if latest and latest[0].status == "failed":
        failure = {"error": FAILED, "message": latest[0].error or ""}
    return thread_view(record, snapshot, running=hub.is_busy(thread_id), failure=failure)


def _record(conversation: Conversation, metadata: dict[str, Any] | None) -> ThreadRecord:
    return ThreadRecord(
        conversation.id,
        conversation.created_at,
        conversation.updated_at,
        GRAPH_METADATA if metadata is None else metadata,
    )
