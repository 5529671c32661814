"""From a run request to a `RunSpec`: the checks that answer 4xx before a run starts.

- an unknown assistant is `404`; a client's assistant fills in what the request leaves
  unset (`assistants/config.py`); an unknown thread `404` (unless `if_not_exists: create`);
- a `webhook` the URL policy refuses is `422` saying why (`webhooks/policy.py`);
- a resume while the thread waits for nothing is `409`, and a thread-less resume `400`;
- new input while the thread waits at a question is `409`, as a new `/v1` message is:
  agent-chat-ui answers a pending tool call with a made-up "Successfully handled tool
  call." message when the person types on, which must not pass for an answer;
- `context` carries DuckLM's switches (`critic`, `memory`); on a resume they change the
  paused turn (`DuckLM.answer`);
- a resume that is an answer (decisions, agent-inbox responses, a password) is read into
  DuckLM's one `Answer` type here and goes through `DuckLM.answer`, as at every door; a
  malformed one is a `422` saying what is wrong. Any other resume value goes to the graph
  as LangGraph's own server would send it, and the graph asks again, saying why;
- a `workspace` in the input or the command's update must be an allowed folder
  (`common/workspace.py`), else `422`;
- a paused sudo question can be answered with `{"password": ...}` (or `{"cancel": true}`):
  the runtime keeps the password in its vault; only a one-time token is checkpointed;
- an MCP server's question (elicitation, sampling) is answered with its `ElicitResult`
  shape, `{"action": "accept", "content": {...}}`, `{"action": "decline"}` or
  `{"action": "cancel"}`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException
from langgraph.types import Command

from ducklm.runtime.facade import DuckLM, NotWaitingError
from ducklm.runtime.runner import GraphOptions
from ducklm.server.agent_protocol.assistants.config import (
    graph_metadata,
    run_assistant,
    with_assistant,
)
from ducklm.server.agent_protocol.common.deps import THREAD_NOT_FOUND, Door
from ducklm.server.agent_protocol.common.inbox import as_decisions
from ducklm.server.agent_protocol.common.schemas import RunCreate, StreamMode
from ducklm.server.agent_protocol.common.workspace import allowed_values
from ducklm.server.agent_protocol.threads.catalog import GRAPH_METADATA, create_thread, find_thread
from ducklm.server.agent_protocol.webhooks.policy import WebhookRefused, check_webhook
from ducklm.tools.elicitation import read_elicit_answer
from ducklm.tools.hitl import (
    Answer,
    DecisionError,
    PasswordAnswer,
    PasswordRefusal,
    read_decisions,
)

NOT_WAITING = "thread {thread_id} is not waiting for an answer: there is nothing to resume"
RESUME_NEEDS_THREAD = "You must provide a thread_id when resuming."
EMPTY_PASSWORD = "the password is empty"
HUMAN = frozenset({"human", "user"})
ROLES = frozenset({"human", "user", "ai", "assistant", "system", "developer", "tool", "function"})
"""The message types and roles LangChain reads (`convert_to_messages`)."""
BAD_ROLE = "input.messages[{index}]: role {role!r} is not one of {roles}"
WAITING = (
    "thread {thread_id} waits for an answer to its question{about}: approve, edit or reject "
    "it (command.resume) before sending a new message"
)


@dataclass(frozen=True)
class RunSpec:
    """Everything one run needs, checked and resolved by the route."""

    thread_id: str
    values: dict[str, Any] | None
    """A state input: the run is a new task (a new turn of the conversation)."""
    command: Command[Any] | None
    """Without `values`: a command for the latest task, or `None` (go on from the checkpoint).
    With `answer`, its `update` and `goto` go with the answer."""
    answer: Answer | None
    message: str
    """The new task's text (the conversation's title when it is new)."""
    critic: bool | None
    """The client's switch (`context.critic`), `None` when it said nothing."""
    memory: bool | None
    options: GraphOptions
    stream_modes: tuple[StreamMode, ...]
    temporary: bool = False
    """A thread-less run: its thread is deleted when it ends."""


async def thread_run(
    thread_id: str,
    body: RunCreate,
    modes: tuple[StreamMode, ...],
    *,
    duck: DuckLM,
    door: Door,
) -> RunSpec:
    """The run of `body` on `thread_id`; creates the thread if asked to."""
    assistant = await run_assistant(body.assistant_id, door.assistants)
    body = with_assistant(body, assistant)
    check_run_webhook(body.webhook, duck)
    if await find_thread(thread_id, duck, door.threads) is None:
        if body.if_not_exists != "create":
            raise HTTPException(404, THREAD_NOT_FOUND.format(thread_id=thread_id))
        _check_uuid(thread_id)
        await create_thread(thread_id, {}, duck, door.threads)
    elif body.input is not None:
        await _check_not_waiting(body.input, thread_id, duck)
    await door.threads.merge(thread_id, {**(body.metadata or {}), **graph_metadata(assistant)})
    return await _spec(body, thread_id, modes, duck)


async def stateless_run(
    body: RunCreate, modes: tuple[StreamMode, ...], *, duck: DuckLM, door: Door
) -> RunSpec:
    """The run of `body` on a new thread, deleted afterwards unless `on_completion: keep`."""
    assistant = await run_assistant(body.assistant_id, door.assistants)
    body = with_assistant(body, assistant)
    check_run_webhook(body.webhook, duck)
    if body.command is not None and body.command.resume is not None:
        raise HTTPException(400, RESUME_NEEDS_THREAD)
    thread_id = str(uuid.uuid4())
    keep = body.on_completion == "keep"
    if keep:
        metadata = {**graph_metadata(assistant), **(body.metadata or {})}
        await create_thread(thread_id, metadata, duck, door.threads)
    return await _spec(body, thread_id, modes, duck, temporary=not keep)


async def queued_run(
    body: RunCreate, thread_id: str, *, temporary: bool, duck: DuckLM, door: Door
) -> RunSpec:
    """The run of a request taken from the run queue, built again where it starts.

    Its thread is not created again: it exists (or, `temporary`, the run creates it).
    The checks run again: the assistant or the thread may be gone, or a workspace no
    longer allowed (an `HTTPException` saying why the run cannot start).
    """
    assistant = await run_assistant(body.assistant_id, door.assistants)
    body = with_assistant(body, assistant)
    if not temporary and await find_thread(thread_id, duck, door.threads) is None:
        raise HTTPException(404, THREAD_NOT_FOUND.format(thread_id=thread_id))
    return await _spec(body, thread_id, body.stream_modes(), duck, temporary=temporary)


async def _spec(
    body: RunCreate,
    thread_id: str,
    modes: tuple[StreamMode, ...],
    duck: DuckLM,
    *,
    temporary: bool = False,
) -> RunSpec:
    values, command, answer = None, None, None
    if body.command is None:
        values = await allowed_values(body.input, duck.settings)
        _check_roles(values)
    else:
        if body.command.resume is not None:
            answer = await _answer(body.command.resume, thread_id, duck)
        update = await allowed_values(body.command.update, duck.settings)
        resume = body.command.resume if answer is None else None
        command = Command(resume=resume, update=update, goto=body.command.goto or ())
    switches = body.context
    return RunSpec(
        thread_id=thread_id,
        values=values,
        command=command,
        answer=answer,
        message=message_text(values),
        critic=switches.critic if switches else None,
        memory=switches.memory if switches else None,
        options=_options(body),
        stream_modes=modes,
        temporary=temporary,
    )


def _options(body: RunCreate) -> GraphOptions:
    return GraphOptions(
        checkpoint_id=body.checkpoint_id
        or (body.checkpoint.checkpoint_id if body.checkpoint else None),
        interrupt_before=body.interrupt_before,
        interrupt_after=body.interrupt_after,
        recursion_limit=body.config.recursion_limit if body.config else None,
        tags=body.config.tags if body.config else None,
        metadata={**(body.metadata or {}), **GRAPH_METADATA},
        subgraphs=body.stream_subgraphs,
    )


def message_text(values: dict[str, Any] | None) -> str:
    """The text of the input's last human message, as DuckLM's task records it."""
    messages = (values or {}).get("messages")
    if isinstance(messages, (dict, str)):
        messages = [messages]
    for item in reversed(messages if isinstance(messages, list) else []):
        if isinstance(item, str):
            return item
        if isinstance(item, dict) and item.get("type", item.get("role")) in HUMAN:
            return _text(item.get("content"))
    return ""


def _check_roles(values: dict[str, Any] | None) -> None:
    """A message of a role LangChain has no type for is a `422`, not a failed run."""
    messages = (values or {}).get("messages")
    items = messages if isinstance(messages, list) else [messages]
    for index, item in enumerate(items):
        if isinstance(item, dict):
            role = item.get("type", item.get("role"))
            if role not in ROLES:
                shown = ", ".join(sorted(ROLES))
                raise HTTPException(422, BAD_ROLE.format(index=index, role=role, roles=shown))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return " ".join(b.get("text", "") for b in blocks if isinstance(b, dict)).strip()


async def _answer(resume: Any, thread_id: str, duck: DuckLM) -> Answer | None:
    """`resume` as DuckLM's answer, or `None` when it is no answer (the graph asks again)."""
    try:
        await duck.pending_request(thread_id)
    except NotWaitingError:
        raise HTTPException(409, NOT_WAITING.format(thread_id=thread_id)) from None
    resume = as_decisions(resume)
    if not isinstance(resume, dict):
        return None
    if "password" in resume:
        password = resume["password"]
        if not isinstance(password, str) or not password:
            raise HTTPException(422, EMPTY_PASSWORD)
        return PasswordAnswer(password=password)
    if resume == {"cancel": True}:
        return PasswordRefusal()
    if "action" in resume:  # an MCP server's question: {"action": "accept", "content": {...}}
        try:
            return read_elicit_answer(resume)
        except DecisionError as exc:
            raise HTTPException(422, str(exc)) from None
    if "decisions" not in resume:
        return None
    try:
        return read_decisions(resume)
    except DecisionError as exc:
        raise HTTPException(422, str(exc)) from None


async def _check_not_waiting(values: dict[str, Any], thread_id: str, duck: DuckLM) -> None:
    snapshot = await duck.states.snapshot(thread_id)
    if not snapshot.interrupts:
        return
    pending = {c["id"]: c["name"] for c in _last_tool_calls(snapshot.values)}
    answered = [pending[i] for i in _tool_answers(values) if i in pending]
    about = f" (the {answered[0]} call this input pretends to answer)" if answered else ""
    raise HTTPException(409, WAITING.format(thread_id=thread_id, about=about))


def _last_tool_calls(values: dict[str, Any]) -> list[dict[str, Any]]:
    messages = values.get("messages") or []
    return list(getattr(messages[-1], "tool_calls", None) or []) if messages else []


def _tool_answers(values: dict[str, Any]) -> list[str]:
    """The tool call ids the input's tool messages claim to answer."""
    messages = values.get("messages") if isinstance(values, dict) else None
    found = []
    for item in messages if isinstance(messages, list) else []:
        if isinstance(item, dict) and item.get("type", item.get("role")) == "tool":
            found.append(str(item.get("tool_call_id")))
    return found


def check_run_webhook(url: str | None, duck: DuckLM) -> None:
    """A `422` saying why, when a run (or a cron) names a webhook the policy refuses."""
    if url is None:
        return
    try:
        check_webhook(url, duck.settings.webhook_hosts)
    except WebhookRefused as exc:
        raise HTTPException(422, str(exc)) from None


def _check_uuid(thread_id: str) -> None:
    try:
        uuid.UUID(thread_id)
    except ValueError:
        raise HTTPException(422, "Invalid thread ID: must be a UUID") from None
