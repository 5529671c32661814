"""How stored things are shown as JSON."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from ducklm.kit.events import Event
from ducklm.models.answer_stream import cut_of
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
    if isinstance(message, HumanMessage):
        return {"role": "user", "content": message.text}
    if isinstance(message, AIMessage):
        view: dict[str, Any] = {
            "role": "assistant",
            "content": message.text,
            "cut": cut_of(message),
        }
        if message.tool_calls:
            view["tool_calls"] = [
                {"id": c["id"], "name": c["name"], "args": c["args"]} for c in message.tool_calls
            ]
        return view
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "content": message.text,
            "tool_call_id": message.tool_call_id,
            "name": message.name,
            "status": message.status,
        }
    return None
