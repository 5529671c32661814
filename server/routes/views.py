"""How stored things are shown as JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from ducklm.events import Event
from ducklm.stores import Conversation, TaskRecord


def task_view(
    task: TaskRecord, pending: list[Event] | None = None, *, running: bool = False
) -> dict[str, Any]:
    """A task, with the questions it waits at; `running` when the hub knows it runs."""
    return {
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


def conversation_view(conversation: Conversation) -> dict[str, Any]:
    """A conversation without its messages."""
    return asdict(conversation)


def message_view(message: AnyMessage) -> dict[str, Any] | None:
    """A message as the web chat shows it; `None` for kinds it does not show."""
    if isinstance(message, HumanMessage):
        return {"role": "user", "content": message.text}
    if isinstance(message, AIMessage):
        view: dict[str, Any] = {"role": "assistant", "content": message.text}
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
