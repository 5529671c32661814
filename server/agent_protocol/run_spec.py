"""From a run request to a `RunSpec`: the checks that answer 4xx before a run starts.

- an unknown assistant is `404`, an unknown thread `404` (unless `if_not_exists: create`);
- a resume while the thread waits for nothing is `409`, and a thread-less resume `400`;
- `context` carries DuckLM's switches (`critic`, `memory`); on a resume they change the
  paused turn with a state update, as `DuckLM.resume` does;
- a `workspace` in the input or the command's update must be an allowed folder
  (`workspace.py`), else `422`;
- a paused sudo question can be answered with `{"password": ...}`: the password goes to
  the runtime's vault and only a one-time token reaches the checkpoint.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from ducklm.context import DuckContext
from ducklm.runtime import DuckLM
from ducklm.server.agent_protocol.assistants import ASSISTANT_ID, GRAPH_ID, is_assistant
from ducklm.server.agent_protocol.deps import Door
from ducklm.server.agent_protocol.schemas import RunCommand, RunCreate, StreamMode
from ducklm.server.agent_protocol.workspace import allowed_values
from ducklm.tools.hitl import is_password_request

NOT_WAITING = "thread {thread_id} is not waiting for an answer: there is nothing to resume"
RESUME_NEEDS_THREAD = "You must provide a thread_id when resuming."
EMPTY_PASSWORD = "the password is empty"


@dataclass(frozen=True)
class RunSpec:
    """Everything one run needs, checked and resolved by the route."""

    run_id: str
    thread_id: str
    graph_input: Any
    """A dict, a `Command`, or `None` (go on from the checkpoint)."""
    config: RunnableConfig
    context: DuckContext
    stream_modes: tuple[StreamMode, ...]
    interrupt_before: Any = None
    interrupt_after: Any = None
    temporary: bool = False
    """A thread-less run: its checkpoints are deleted when it ends."""
    metadata: dict[str, Any] | None = None
    """Merged into the thread's metadata when the run starts."""


async def thread_run(
    thread_id: str,
    body: RunCreate,
    modes: tuple[StreamMode, ...],
    *,
    duck: DuckLM,
    door: Door,
) -> RunSpec:
    """The run of `body` on `thread_id`; creates the thread if asked to."""
    _check_assistant(body.assistant_id)
    metadata = {"graph_id": GRAPH_ID, "assistant_id": ASSISTANT_ID}
    if await door.threads.get(thread_id) is None:
        if body.if_not_exists != "create":
            raise HTTPException(404, f"Thread with ID {thread_id} not found")
        _check_uuid(thread_id)
        await door.threads.create(thread_id, {**metadata, **(body.metadata or {})})
    graph_input = await _graph_input(body, thread_id, duck)
    return _spec(body, thread_id, graph_input, modes, duck, metadata=metadata)


async def stateless_run(
    body: RunCreate, modes: tuple[StreamMode, ...], *, duck: DuckLM, door: Door
) -> RunSpec:
    """The run of `body` on a new thread, deleted afterwards unless `on_completion: keep`."""
    _check_assistant(body.assistant_id)
    if body.command is not None and body.command.resume is not None:
        raise HTTPException(400, RESUME_NEEDS_THREAD)
    thread_id = str(uuid.uuid4())
    keep = body.on_completion == "keep"
    if keep:
        metadata = {"graph_id": GRAPH_ID, "assistant_id": ASSISTANT_ID, **(body.metadata or {})}
        await door.threads.create(thread_id, metadata)
    graph_input = await _graph_input(body, thread_id, duck)
    return _spec(body, thread_id, graph_input, modes, duck, temporary=not keep)


def _spec(
    body: RunCreate,
    thread_id: str,
    graph_input: Any,
    modes: tuple[StreamMode, ...],
    duck: DuckLM,
    *,
    metadata: dict[str, Any] | None = None,
    temporary: bool = False,
) -> RunSpec:
    run_id = uuid.uuid4()
    switches = body.context
    context = duck.context.for_run(
        critic=switches is None or switches.critic is not False,
        memory=switches is None or switches.memory is not False,
    )
    return RunSpec(
        run_id=str(run_id),
        thread_id=thread_id,
        graph_input=graph_input,
        config=_config(body, thread_id, run_id),
        context=context,
        stream_modes=modes,
        interrupt_before=body.interrupt_before,
        interrupt_after=body.interrupt_after,
        temporary=temporary,
        metadata=metadata,
    )


def _config(body: RunCreate, thread_id: str, run_id: uuid.UUID) -> RunnableConfig:
    configurable: dict[str, Any] = {"thread_id": thread_id}
    checkpoint_id = body.checkpoint_id or (
        body.checkpoint.checkpoint_id if body.checkpoint else None
    )
    if checkpoint_id:
        configurable.update(checkpoint_id=checkpoint_id, checkpoint_ns="")
    config: RunnableConfig = {
        "configurable": configurable,
        "run_id": run_id,
        "metadata": {
            **(body.metadata or {}),
            "graph_id": GRAPH_ID,
            "assistant_id": ASSISTANT_ID,
        },
    }
    if body.config and body.config.recursion_limit:
        config["recursion_limit"] = body.config.recursion_limit
    if body.config and body.config.tags:
        config["tags"] = body.config.tags
    return config


async def _graph_input(body: RunCreate, thread_id: str, duck: DuckLM) -> Any:
    if body.command is None:
        return await allowed_values(body.input, duck.settings)
    command = body.command
    resume = command.resume
    if resume is not None:
        resume = await _checked_resume(resume, thread_id, duck)
    update = await allowed_values(_update(command, body), duck.settings)
    return Command(resume=resume, update=update, goto=command.goto or ())


async def _checked_resume(resume: Any, thread_id: str, duck: DuckLM) -> Any:
    snapshot = await duck.graph.aget_state({"configurable": {"thread_id": thread_id}})
    if not snapshot.interrupts:
        raise HTTPException(409, NOT_WAITING.format(thread_id=thread_id))
    pending = snapshot.interrupts[0].value
    if is_password_request(pending) and isinstance(resume, dict) and "password" in resume:
        password = resume["password"]
        if not isinstance(password, str) or not password:
            raise HTTPException(422, EMPTY_PASSWORD)
        return {"password_token": duck.context.vault.put(password)}
    return resume


def _update(command: RunCommand, body: RunCreate) -> Any:
    switches = body.context
    if switches is None or command.resume is None:
        return command.update
    pairs = (("run_critic", switches.critic), ("run_memory_policy", switches.memory))
    changes = {key: value for key, value in pairs if value is not None}
    if not changes:
        return command.update
    if isinstance(command.update, list):
        return [*command.update, *changes.items()]
    return {**(command.update or {}), **changes}


def _check_assistant(assistant_id: str) -> None:
    if not is_assistant(assistant_id):
        raise HTTPException(404, f"assistant {assistant_id} not found: use {GRAPH_ID!r}")


def _check_uuid(thread_id: str) -> None:
    try:
        uuid.UUID(thread_id)
    except ValueError:
        raise HTTPException(422, "Invalid thread ID: must be a UUID") from None
