"""The conversation door over HTTP: `ducklm chat`/`resume`/`password` through `ducklm serve`.

`RemoteConversations` has the methods of `DuckLM` that `ducklm.cli.chat` uses and
translates each into the server's API (docs/api.md), so the commands are written once.
A thread's waiting question is found through its latest task; a run's events come back
as the SSE stream's events, the same dicts the in-process runtime yields.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from ducklm.cli.remote_client import DuckServer, ServerFailed, ServerRefused
from ducklm.tools.hitl import (
    Answer,
    DecisionError,
    Decisions,
    ElicitAnswer,
    PasswordAnswer,
    PasswordRefusal,
    is_password_request,
    is_server_question,
)

if TYPE_CHECKING:
    from ducklm.cli.chat import ConversationDoor
    from ducklm.config.settings import Settings
    from ducklm.kit.events import Event

RemoteCommand = Callable[[DuckServer, "Settings", argparse.Namespace], Coroutine[Any, Any, int]]
CANCEL_TIMEOUT_S = 5.0


def over_http(
    command: Callable[[ConversationDoor, argparse.Namespace], Coroutine[Any, Any, int]],
) -> RemoteCommand:
    """`command` run against the server instead of an in-process `DuckLM`."""

    async def run(server: DuckServer, settings: Settings, args: argparse.Namespace) -> int:
        return await command(RemoteConversations(server), args)

    return run


class RemoteConversations:
    """A `ConversationDoor` whose runs belong to the server."""

    def __init__(self, server: DuckServer) -> None:
        self._server = server

    def stream(
        self,
        message: str,
        *,
        thread_id: str | None = None,
        critic: bool = True,
        memory: bool = True,
    ) -> AsyncIterator[Event]:
        """`POST /v1/chat/stream`."""
        body: dict[str, Any] = {"message": message, "critic": critic, "memory": memory}
        if thread_id is not None:
            body["conversation_id"] = thread_id
        return self._run("/v1/chat/stream", body)

    def send(
        self,
        message: str,
        *,
        thread_id: str | None = None,
        critic: bool = True,
        memory: bool = True,
    ) -> AsyncIterator[Event]:
        """`POST /v1/chat/stream`, which expands MCP prompts and mentions (`expand`)."""
        return self.stream(message, thread_id=thread_id, critic=critic, memory=memory)

    async def resume(
        self,
        thread_id: str,
        decisions: Decisions,
        *,
        critic: bool | None = None,
        memory: bool | None = None,
    ) -> AsyncIterator[Event]:
        """`POST /v1/tasks/{id}/continue/stream` for the question the thread waits at."""
        task_id, interrupt_id, request = await self._question(thread_id)
        if is_password_request(request):
            raise ServerRefused(f"thread {thread_id!r} is waiting for a password, not a decision")
        body = {
            "decisions": decisions.wire()["decisions"],  # the server checks them
            "interrupt_id": interrupt_id,
            **{k: v for k, v in {"critic": critic, "memory": memory}.items() if v is not None},
        }
        async for item in self._run(f"/v1/tasks/{task_id}/continue/stream", body):
            yield item

    async def answer(
        self,
        thread_id: str,
        answer: Answer,
        *,
        critic: bool | None = None,
        memory: bool | None = None,
    ) -> AsyncIterator[Event]:
        """The answer through the route for its kind (`/v1/tasks/{id}/elicitation/stream`...)."""
        if isinstance(answer, Decisions):
            stream = self.resume(thread_id, answer, critic=critic, memory=memory)
        elif isinstance(answer, PasswordAnswer):
            stream = self.provide_password(thread_id, answer.password)
        elif isinstance(answer, PasswordRefusal):
            stream = self.cancel_password(thread_id)
        else:
            stream = self._server_answer(thread_id, answer)
        async for item in stream:
            yield item

    async def _server_answer(self, thread_id: str, answer: ElicitAnswer) -> AsyncIterator[Event]:
        task_id, interrupt_id, request = await self._question(thread_id)
        if not is_server_question(request):
            raise ServerRefused(f"thread {thread_id!r} is not waiting for an MCP server's question")
        body = {**answer.wire(), "interrupt_id": interrupt_id}
        async for item in self._run(f"/v1/tasks/{task_id}/elicitation/stream", body):
            yield item

    async def continue_run(self, thread_id: str) -> AsyncIterator[Event]:
        """`POST /v1/tasks/{id}/resume/stream` for the thread's latest task."""
        task = await self._latest_task(thread_id)
        if task is None:
            raise ServerRefused(f"thread {thread_id!r} has no task to go on with")
        async for item in self._run(f"/v1/tasks/{task['task_id']}/resume/stream", None):
            yield item

    async def provide_password(self, thread_id: str, password: str) -> AsyncIterator[Event]:
        """`POST /v1/tasks/{id}/password/stream` with the password."""
        if not password:
            raise DecisionError("the password is empty")
        async for item in self._password(thread_id, {"password": password}):
            yield item

    async def cancel_password(self, thread_id: str) -> AsyncIterator[Event]:
        """`POST /v1/tasks/{id}/password/stream` with a refusal."""
        async for item in self._password(thread_id, {"cancel": True}):
            yield item

    async def pending_request(self, thread_id: str) -> tuple[str, Any]:
        """The interrupt id and request of the question the thread waits at."""
        _, interrupt_id, request = await self._question(thread_id)
        return interrupt_id, request

    def review_pending(self, thread_id: str) -> bool:
        """Never: the server runs the reviews behind its answers."""
        return False

    async def finish_review(self, thread_id: str) -> None:
        """Nothing to wait for here (the server's reviews go on without this command)."""

    async def skip_review(self, thread_id: str) -> int:
        """Nothing to skip here (see `review_pending`)."""
        return 0

    async def choose_model(self, thread_id: str, model: str | None) -> str | None:
        """`PUT /v1/conversations/{id}/model` (a 422 lists the models the server offers)."""
        path = f"/v1/conversations/{thread_id}/model"
        view: dict[str, Any] = await self._server.call("PUT", path, json={"model": model})
        return str(view["model"]) if view["chosen"] else None

    async def _password(self, thread_id: str, body: dict[str, Any]) -> AsyncIterator[Event]:
        task_id, _, request = await self._question(thread_id)
        if not is_password_request(request):
            raise ServerRefused(f"thread {thread_id!r} is not waiting for a password")
        async for item in self._run(f"/v1/tasks/{task_id}/password/stream", body):
            yield item

    async def _question(self, thread_id: str) -> tuple[str, str, Any]:
        """The waiting task's id, and the interrupt id and request it waits at."""
        latest = await self._latest_task(thread_id)
        if latest is not None and latest["status"] == "interrupted":
            task = await self._server.call("GET", f"/v1/tasks/{latest['task_id']}")
            for asked in task["pending"]:
                return task["task_id"], asked["interrupt_id"], asked["request"]
        raise ServerRefused(f"thread {thread_id!r} is not waiting for a decision")

    async def _latest_task(self, thread_id: str) -> dict[str, Any] | None:
        params = {"conversation_id": thread_id, "limit": 1}
        tasks: list[dict[str, Any]] = await self._server.call("GET", "/v1/tasks", params=params)
        return tasks[0] if tasks else None

    async def _run(self, path: str, body: dict[str, Any] | None) -> AsyncIterator[Event]:
        """The run's events; Ctrl-C cancels the run, as it does in-process.

        A run belongs to the server and outlives its connection, so leaving would not
        stop it: the person who pressed Ctrl-C meant it to stop.
        """
        task_id: str | None = None
        try:
            async for item in self._server.events(path, body):
                task_id = item.get("task_id", task_id)
                yield item
        except asyncio.CancelledError:
            if task_id is not None:
                await self._cancel(task_id)
            raise

    async def _cancel(self, task_id: str) -> None:
        with suppress(ServerRefused, ServerFailed, TimeoutError):
            cancel = self._server.call("POST", f"/v1/tasks/{task_id}/cancel")
            await asyncio.wait_for(cancel, CANCEL_TIMEOUT_S)


if TYPE_CHECKING:

    def _remote_is_a_door(remote: RemoteConversations) -> ConversationDoor:
        return remote  # mypy checks here that the HTTP door fits the commands
