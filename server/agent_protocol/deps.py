"""What the Agent Protocol routes get through `Depends`: the runtime, the door, the hub."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from fastapi import Depends, HTTPException, Request

from ducklm.server.agent_protocol.store import ThreadRecord, ThreadStore
from ducklm.server.deps import Duck, Hub

if TYPE_CHECKING:
    from ducklm.server.agent_protocol.execution import ActiveRuns


@dataclass(frozen=True)
class Door:
    """The door's own state, opened by its router's lifespan."""

    threads: ThreadStore
    """Which threads exist, with their metadata."""
    runs: ActiveRuns
    """The runs in flight; each is a task of the server, not of a connection."""
    started_at: float
    """When the door opened (the assistant's `created_at`)."""
    version: str
    """DuckLM's version, for `/info`."""


class ThreadClaims(Protocol):
    """The part of the server's task hub (`ducklm.server.tasks.TaskHub`) the door uses."""

    def claim(self, thread_id: str) -> AbstractAsyncContextManager[Any]:
        """Hold `thread_id` for one run; raises `ThreadBusy` when it already runs."""
        ...

    def live_in(self, thread_id: str) -> object | None:
        """The `/v1` task running on `thread_id`, if any."""
        ...


def get_door(request: Request) -> Door:
    """The door's state, put in `app.state.agent_protocol` by its lifespan."""
    door: Door = request.app.state.agent_protocol
    return door


async def get_thread(thread_id: str, door: Annotated[Door, Depends(get_door)]) -> ThreadRecord:
    """The thread named by the path, or `404`."""
    record = await door.threads.get(thread_id)
    if record is None:
        raise HTTPException(404, f"Thread with ID {thread_id} not found")
    return record


DuckDep = Duck
DoorDep = Annotated[Door, Depends(get_door)]
HubDep = Hub
ThreadDep = Annotated[ThreadRecord, Depends(get_thread)]
