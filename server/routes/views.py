"""How stored things are shown as JSON."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, AnyMessage

from ducklm.kit.events import Event
from ducklm.models.answer_stream import cut_of, reasoning_of
from ducklm.runtime.exports.jsonl import message_line
from ducklm.server.responses import MessageView, TaskView
from ducklm.stores import TaskRecord


def task_view(
    task: TaskRecord, pending: list[Event] | None = None, *, running: bool = False
) -> TaskView:
    """A task, with the questions it waits at; `running` when the hub knows it runs."""
    return TaskView.model_validate(
        {
            "task_id": task.task_id,
            "conversation_id": task.thread_id,
            "status": "running" if running else task.status,
            "message": task.message,
            "started_at": task.created_at,
            "finished_at": None if running or task.is_open else task.updated_at,
            "answer": task.answer,
            "error": task.error,
            "pending": pending or [],
        }
    )


def message_view(message: AnyMessage) -> MessageView | None:
    """A message as the web chat shows it; `None` for kinds it does not show."""
    view = _message_fields(message)
    return None if view is None else MessageView.model_validate(view)


def _message_fields(message: AnyMessage) -> dict[str, Any] | None:
    # The export's line of the message (one shape for both), plus what only the chat shows.
    line = message_line(message)
    if line is None:
        return None
    fields = {key: value for key, value in line.items() if key != "type"}
    if isinstance(message, AIMessage):
        fields["cut"] = cut_of(message)
        # Apart from the answer, as the live `reasoning` events showed it.
        fields["reasoning"] = reasoning_of(message) or None
    return fields
