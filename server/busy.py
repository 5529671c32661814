"""`ThreadBusy`: a conversation already runs a task, and what the refusal tells a client.

One run per thread, whichever door asks (`/v1` answers 409 through `server/errors.py`,
the Agent Protocol door in its run routes). The refusal names the running task and the
two things a client can do, through the `/v1` routes every door's tasks share: follow it
to its end, or cancel it.
"""

from __future__ import annotations

BUSY = "conversation {thread_id!r} is already running a task"
RUNNING_TASK = (
    "conversation {thread_id!r} is already running a task, {task_id!r}: wait for it to end "
    "(GET /v1/tasks/{task_id}/stream follows it there) or cancel it "
    "(POST /v1/tasks/{task_id}/cancel)"
)


class ThreadBusy(RuntimeError):
    """The thread already has a run going, or a question waiting for an answer."""

    def __init__(self, message: str, *, task_id: str | None = None) -> None:
        super().__init__(message)
        self.task_id = task_id
        """The task that holds the thread, when known."""

    @classmethod
    def running(cls, thread_id: str, task_id: str | None) -> ThreadBusy:
        """The refusal while `task_id` runs on `thread_id` (`None`: not known, or no task)."""
        if not task_id:
            return cls(BUSY.format(thread_id=thread_id))
        return cls(RUNNING_TASK.format(thread_id=thread_id, task_id=task_id), task_id=task_id)
