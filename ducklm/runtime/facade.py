"""The library facade: open DuckLM, run or stream a message, resume a paused run.

    async with DuckLM.open() as duck:
        result = await duck.run("What is in notes.md?", thread_id="t1")
        if result.status == "interrupted":
            result = await duck.resume_run("t1", [{"type": "approve"}])

The CLI and the server call these same methods.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from ducklm.config.settings import Settings, load_settings
from ducklm.graph.builder import DuckGraph, ReviewGraph, build_graph, build_review_graph
from ducklm.graph.context import DuckContext
from ducklm.graph.dependencies import Dependencies, open_dependencies
from ducklm.graph.routing import AT_REST
from ducklm.graph.state import DuckState
from ducklm.kit.events import Event, RunStatus, done_fields, event
from ducklm.kit.ids import new_task_id, new_thread_id
from ducklm.kit.workspaces import requested_workspace, resolve_workspace
from ducklm.mcp.errors import TypedInputError
from ducklm.mcp.typed import expand, has_mcp_parts
from ducklm.memory.embeddings import embeddings_warm
from ducklm.memory.episodes import EpisodeWriter
from ducklm.runtime.branches import Branches
from ducklm.runtime.conversation_search import ConversationSearch, search_conversations
from ducklm.runtime.episodes import reindex_conversations, turn_loader
from ducklm.runtime.leases import keep_leases
from ducklm.runtime.model_choice import ModelServer, check_model, model_server
from ducklm.runtime.observer import RunObserver
from ducklm.runtime.recovery import recover_dead_runs
from ducklm.runtime.reviews import (
    DEFERRED_FOR_MESSAGE,
    DEFERRED_FOR_REVERT,
    DEFERRED_FOR_UPDATE,
    Reviews,
    ReviewState,
)
from ducklm.runtime.runner import (
    GraphOptions,
    TaskRef,
    answered_checkpoint,
    close_review,
    question_event,
    stream_review,
    stream_run,
)
from ducklm.runtime.states import StateReader, thread_config
from ducklm.runtime.transcript import Exchange, read_transcript
from ducklm.runtime.workspace_files import Uploaded, open_download, upload_file
from ducklm.stores import (
    ApprovalRule,
    AuditRecord,
    Conversations,
    Database,
    RunRecord,
    RunStores,
    TaskRecord,
)
from ducklm.stores.checkpoint_copy import copy_checkpoints
from ducklm.stores.checkpoints import open_checkpointer
from ducklm.stores.conversation_models import ConversationModels
from ducklm.tools.elicitation import check_elicit_answer
from ducklm.tools.hitl import (
    Answer,
    DecisionError,
    Decisions,
    ElicitAnswer,
    HITLRequest,
    PasswordAnswer,
    PasswordRefusal,
    check_decisions,
    is_password_request,
    is_server_question,
    read_decisions,
)
from ducklm.undo import UndoError, UndoResult
from ducklm.undo.service import UNDO_OFF

log = logging.getLogger(__name__)
WAITS_FOR_ANSWER = (
    "conversation {thread_id!r} waits for an answer to its question: answer it before "
    "attaching a resource of an untrusted MCP server"
)


class NotWaitingError(LookupError):
    """A resume for a thread that is not paused at a question."""


def _server_answer(thread_id: str, request: Any, answer: Answer) -> dict[str, Any]:
    """The resume value for an answer to an MCP server's question, checked against it.

    Raises:
        NotWaitingError: The answer and the question are not of the same kind.
        DecisionError: The form's content does not fit the question's schema.
    """
    if not is_server_question(request):
        raise NotWaitingError(f"thread {thread_id!r} is not waiting for an MCP server's question")
    if not isinstance(answer, ElicitAnswer):
        raise NotWaitingError(
            f"thread {thread_id!r} is waiting for an answer to an MCP server's question "
            '({"action": "accept" | "decline" | "cancel"}), not a decision or a password'
        )
    return check_elicit_answer(request, answer).wire()


@dataclass
class RunResult:
    """How a run ended, with every event it produced."""

    thread_id: str
    task_id: str
    status: RunStatus
    answer: str
    events: list[Event] = field(default_factory=list)

    @property
    def pending(self) -> list[Event]:
        """The approval requests that paused the run (empty unless interrupted)."""
        return [e for e in self.events if e["type"] == "approval_requested"]


class DuckLM:
    """An open DuckLM: the compiled graph on its checkpointer, plus its stores."""

    def __init__(self, deps: Dependencies, graph: DuckGraph) -> None:
        self._deps = deps
        self.graph = graph
        self.states = StateReader(graph)
        """Reads the threads' checkpointed states: `snapshot` (the latest, or one
        checkpoint) and `history` (`ducklm.runtime.states`)."""
        self.branches = Branches(graph, deps.stores.runs)
        """Each message's versions, from the checkpoint tree (`ducklm.runtime.branches`)."""
        self.observer: RunObserver | None = None
        """Sees every run's events and steps (the server's metrics); `None`: nobody."""
        self._prefetches: set[asyncio.Task[Any]] = set()
        self._chosen_models = ConversationModels(deps.stores.db)
        episodes = deps.context.episodes
        load = turn_loader(graph, str(deps.context.settings.workspace))
        settings = deps.context.settings
        warm = functools.partial(embeddings_warm, settings)
        self.episode_writer = None if episodes is None else EpisodeWriter(episodes, load, warm=warm)
        """Indexes each ended run's messages behind it (`ducklm.memory.episodes`)."""
        review_context = deps.context.for_run(review_behind=True)
        reviewers: ReviewGraph = build_review_graph().compile(name="ducklm-review")
        self.reviews = Reviews(
            lambda ref: stream_review(
                graph, reviewers, ref, context=review_context, stores=deps.stores
            ),
            lambda thread_id: answered_checkpoint(graph, thread_id),
            lambda ref, why: close_review(deps.stores, ref, why),
        )
        """The critic and memory policy behind each answered turn (`ducklm.runtime.reviews`)."""

    @classmethod
    @asynccontextmanager
    async def open(
        cls, settings: Settings | None = None, **overrides: Any
    ) -> AsyncIterator[DuckLM]:
        """Open the checkpointer and stores; close them on exit.

        Runs left `running` by a process that has died are marked interrupted here
        (`ducklm.runtime.recovery`); `continue_run` goes on with them.

        Args:
            settings: Settings to use; read from the environment and `.env` when `None`.
            **overrides: Settings fields that win over the environment.
        """
        if settings is None:
            settings = await asyncio.to_thread(load_settings, **overrides)
        async with (
            open_dependencies(settings) as deps,
            open_checkpointer(settings.checkpoint_location) as saver,
            keep_leases(deps.stores),  # PostgreSQL: this process's runs stay its own
        ):
            await recover_dead_runs(deps.stores)
            graph = build_graph(
                retry_attempts=settings.model_retry_attempts,
                retry_initial_interval=settings.model_retry_initial_interval,
            ).compile(checkpointer=saver, name="ducklm")
            duck = cls(deps, graph)
            try:
                yield duck
            finally:
                await duck.context.embeddings.aclose()
                await duck.reviews.aclose()  # each one stopped is recorded as skipped
                if duck.episode_writer is not None:  # what is queued lands before closing
                    await duck.episode_writer.aclose()

    def warm_up(self) -> None:
        """Load the embedding model in the background; returns at once.

        `ducklm serve` calls it as it starts: its state is in `/health`, and turns
        that start before it is ready go on without recall (`ducklm.memory.warmup`).
        """
        memory = self._deps.context.memory
        if memory is not None:
            self._deps.context.embeddings.start(memory.embedder)

    @property
    def settings(self) -> Settings:
        """The settings this instance was opened with."""
        return self._deps.context.settings

    @property
    def context(self) -> DuckContext:
        """The run context: model roles, tools, policy, sandbox."""
        return self._deps.context

    @property
    def database(self) -> Database:
        """DuckLM's own database (tasks, runs, events, conversations, rules)."""
        return self._deps.stores.db

    @property
    def run_stores(self) -> RunStores:
        """Runs, tasks, events and conversations, on `database` (the reaper takes them)."""
        return self._deps.stores

    @property
    def conversations(self) -> Conversations:
        """Conversation titles and workspaces (the messages are in the checkpoints)."""
        return self._deps.stores.conversations

    def stream(
        self,
        message: str,
        *,
        thread_id: str | None = None,
        workspace: str | None = None,
        critic: bool = True,
        memory: bool = True,
        task_id: str | None = None,
    ) -> AsyncIterator[Event]:
        """Run `message` as a new task on a thread (a new one when `thread_id` is `None`).

        Yields the run's events; each carries the `task_id` (`task_id` chooses it).

        Raises:
            WorkspaceError: `workspace` is not an allowed folder (`ducklm.kit.workspaces`);
                raised when iteration starts, before anything is written.
        """
        graph_input: dict[str, Any] = {"messages": [HumanMessage(content=message)]}
        thread_id = thread_id or new_thread_id()
        task = TaskRef(task_id or new_task_id(), message, bump_conversation=True)
        return self._new_task(
            graph_input, thread_id, task, workspace=workspace, critic=critic, memory=memory
        )

    async def send(
        self,
        message: str,
        *,
        thread_id: str | None = None,
        workspace: str | None = None,
        critic: bool = True,
        memory: bool = True,
        task_id: str | None = None,
    ) -> AsyncIterator[Event]:
        """Run what the person typed, as `stream` does, with its MCP parts expanded first.

        `/server:prompt ...` sends that prompt's messages and `@server:uri` attaches that
        resource (`ducklm.mcp.typed`); a message without them is `stream`'s. Only the
        person's doors call this (the web chat, `ducklm chat`): it reads what they name.

        Raises:
            TypedInputError: An unknown prompt, a missing argument, a resource that could
                not be read; raised when iteration starts, before anything is written.
            WorkspaceError: As for `stream`.
        """
        mcp = self._deps.context.mcp
        if not has_mcp_parts(message, mcp):
            async for item in self.stream(
                message,
                thread_id=thread_id,
                workspace=workspace,
                critic=critic,
                memory=memory,
                task_id=task_id,
            ):
                yield item
            return
        typed = await expand(message, mcp)
        thread_id = thread_id or new_thread_id()
        snapshot = await self.states.snapshot(thread_id)
        tainted = snapshot.values.get("taint") is not None
        if typed.taint is not None and not tainted:
            # The graph's input carries messages only (`InputState`): the taint is written
            # as imports write theirs, a state update on the thread at rest.
            if snapshot.next:
                raise TypedInputError(WAITS_FOR_ANSWER.format(thread_id=thread_id))
            await self.update_state(thread_id, {"taint": typed.taint}, as_node=AT_REST)
        task = TaskRef(
            task_id or new_task_id(),
            message,
            bump_conversation=True,
            opening=typed.opening(tainted=tainted),
        )
        graph_input: dict[str, Any] = {"messages": typed.messages()}
        async for item in self._new_task(
            graph_input, thread_id, task, workspace=workspace, critic=critic, memory=memory
        ):
            yield item

    def stream_values(
        self,
        values: dict[str, Any],
        *,
        thread_id: str,
        message: str,
        critic: bool = True,
        memory: bool = True,
        options: GraphOptions | None = None,
    ) -> AsyncIterator[Event]:
        """Run a state input (`{"messages": [...], ...}`, as LangGraph clients send it) as a task.

        `message` is the task's text (its conversation's title when new); a `workspace`
        in `values` must already be an allowed folder (the door checks it).
        """
        workspace = values.get("workspace") or None
        task = TaskRef(new_task_id(), message, bump_conversation=True, workspace=workspace)
        self._prefetch_embedding(message)
        return self._stream(dict(values), thread_id, task, critic, memory, options=options)

    async def stream_command(
        self,
        thread_id: str,
        command: Command[Any] | None,
        *,
        critic: bool = True,
        memory: bool = True,
        options: GraphOptions | None = None,
    ) -> AsyncIterator[Event]:
        """Go on with the thread's latest task: a LangGraph `command`, or none (the checkpoint).

        The caller has checked that the command fits the thread (a resume needs a question).
        """
        task = await self._task_of(thread_id)
        async for item in self._stream(command, thread_id, task, critic, memory, options=options):
            yield item

    async def run(self, message: str, **kwargs: Any) -> RunResult:
        """Like `stream`, collected into a `RunResult`."""
        return await _collect(self.stream(message, **kwargs))

    async def answer(
        self,
        thread_id: str,
        answer: Answer,
        *,
        interrupt_id: str | None = None,
        critic: bool | None = None,
        memory: bool | None = None,
        update: Any = None,
        goto: Any = (),
        options: GraphOptions | None = None,
    ) -> AsyncIterator[Event]:
        """Answer the question a thread is paused at and yield the rest of the run.

        Every door answers through here: `/v1`, the Agent Protocol door, the CLI and the
        library, for approvals, edits and passwords alike. `answer` is already typed
        (each door reads its wire format into `Answer`); here it is checked against the
        question, once, before anything runs.

        `interrupt_id`, when given, names the question answered: a stale answer (to a
        question answered already) is refused instead of answering the next one.
        `critic` and `memory` change the paused turn's switches; `None` keeps them.
        `update` and `goto` go into the same `Command` (LangGraph clients send them).

        Raises:
            NotWaitingError: The thread is not paused at a question, at another one, or
                at one of the other kind (a password for decisions, or the reverse).
            DecisionError: The decisions do not answer it (wrong count or type, bad edit).
        """
        resume = await self._resume_value(thread_id, answer, interrupt_id)
        pairs = (("run_critic", critic), ("run_memory_policy", memory))
        switches = {key: on for key, on in pairs if on is not None}
        command: Command[Any] = Command(resume=resume, update=_with(update, switches), goto=goto)
        task = await self._task_of(thread_id)
        async for item in self._stream(
            command, thread_id, task, critic is not False, memory is not False, options=options
        ):
            yield item

    async def _resume_value(
        self, thread_id: str, answer: Answer, interrupt_id: str | None
    ) -> dict[str, Any]:
        """`Command.resume` for `answer`, checked against the question it answers."""
        pending_id, request = await self.pending_request(thread_id)
        if interrupt_id is not None and interrupt_id != pending_id:
            raise NotWaitingError(
                f"thread {thread_id!r} is not waiting at question {interrupt_id!r} "
                "(it was answered already, or belongs to another task)"
            )
        value: dict[str, Any]
        if isinstance(answer, ElicitAnswer) or is_server_question(request):
            value = _server_answer(thread_id, request, answer)
        elif isinstance(answer, Decisions):
            if is_password_request(request):
                raise NotWaitingError(
                    f"thread {thread_id!r} is waiting for a password, not a decision"
                )
            # The checkpoint holds the HITL wire form, as from any LangGraph client, so
            # a run reads the same whichever server answered it (`tools/hitl.py`).
            value = check_decisions(request, answer).wire()
        elif not is_password_request(request):
            raise NotWaitingError(f"thread {thread_id!r} is not waiting for a password")
        elif isinstance(answer, PasswordRefusal):
            value = {"cancel": True}
        else:
            # Only a one-time token reaches the checkpoint; the password stays in memory.
            value = {"password_token": self._deps.context.vault.put(answer.password)}
        return {pending_id: value}

    async def resume(
        self,
        thread_id: str,
        decisions: list[dict[str, Any]] | Decisions,
        *,
        interrupt_id: str | None = None,
        critic: bool | None = None,
        memory: bool | None = None,
    ) -> AsyncIterator[Event]:
        """`answer` with decisions in the HITL shape (`[{"type": "approve"}, ...]`).

        Raises:
            NotWaitingError: As `answer`.
            DecisionError: The decisions are malformed or do not answer the question.
        """
        if not isinstance(decisions, Decisions):
            decisions = read_decisions({"decisions": list(decisions)})
        async for item in self.answer(
            thread_id, decisions, interrupt_id=interrupt_id, critic=critic, memory=memory
        ):
            yield item

    async def resume_run(
        self, thread_id: str, decisions: list[dict[str, Any]] | Decisions, **kwargs: Any
    ) -> RunResult:
        """Like `resume`, collected into a `RunResult`."""
        return await _collect(self.resume(thread_id, decisions, **kwargs))

    async def provide_password(self, thread_id: str, password: str) -> AsyncIterator[Event]:
        """`answer` with the sudo password a thread is waiting for.

        The password stays in this process's memory under a one-time token; only the
        token reaches the checkpoint. It is never written anywhere.

        Raises:
            NotWaitingError: The thread is not waiting for a password.
            DecisionError: The password is empty.
        """
        if not password:
            raise DecisionError("the password is empty")
        async for item in self.answer(thread_id, PasswordAnswer(password=password)):
            yield item

    async def cancel_password(self, thread_id: str) -> AsyncIterator[Event]:
        """`answer` a password question with a refusal: the command does not run."""
        async for item in self.answer(thread_id, PasswordRefusal()):
            yield item

    async def continue_run(self, thread_id: str) -> AsyncIterator[Event]:
        """Go on with a run that stopped without a question (the process died mid-run).

        A command that had already started is not run again: the model and the person
        are told its outcome is unknown.

        Raises:
            NotWaitingError: The thread has nothing left to run, or waits for a question.
        """
        await self.check_unfinished(thread_id)
        async for item in self._stream(None, thread_id, await self._task_of(thread_id)):
            yield item

    async def check_unfinished(self, thread_id: str) -> None:
        """Make sure `continue_run` has something to go on with.

        Raises:
            NotWaitingError: The thread has nothing left to run, or waits for a question.
        """
        snapshot = await self.states.snapshot(thread_id)
        if snapshot.interrupts:
            raise NotWaitingError(f"thread {thread_id!r} is waiting for an answer; use resume")
        # A node whose writes were saved just before the process died is no longer in
        # `next`, but its task is: the run goes on from those writes (nothing re-runs).
        if not snapshot.next and not snapshot.tasks:
            raise NotWaitingError(f"thread {thread_id!r} has no unfinished run")

    async def replay(
        self,
        thread_id: str,
        checkpoint_id: str | None = None,
        *,
        critic: bool = True,
        memory: bool = True,
    ) -> AsyncIterator[Event]:
        """Run again from an earlier checkpoint, as a fork of the thread (time travel).

        The checkpoints after `checkpoint_id` stay in the history; the thread goes on
        from the new branch. Without `checkpoint_id`, the last turn runs again from its
        input. The replay is a new task.

        Raises:
            LookupError: The thread has no such checkpoint.
            NotWaitingError: Nothing runs after that checkpoint.
        """
        checkpoint_id = checkpoint_id or await self._turn_input(thread_id)
        snapshot = await self.states.snapshot(thread_id, checkpoint_id)
        if snapshot.created_at is None:
            raise LookupError(f"thread {thread_id!r} has no checkpoint {checkpoint_id!r}")
        if not snapshot.next:
            raise NotWaitingError(f"nothing runs after checkpoint {checkpoint_id!r}")
        humans = [m.text for m in snapshot.values.get("messages", []) if m.type == "human"]
        message = f"replay: {humans[-1] if humans else checkpoint_id}"
        task = TaskRef(new_task_id(), message, bump_conversation=True)
        async for item in self._stream(
            None, thread_id, task, critic, memory, checkpoint_id=checkpoint_id
        ):
            yield item

    async def fork(
        self,
        thread_id: str,
        checkpoint_id: str,
        message: str | None = None,
        *,
        critic: bool = True,
        memory: bool = True,
        task_id: str | None = None,
    ) -> AsyncIterator[Event]:
        """A new version of the message at `checkpoint_id`: regenerate, or edit and resend.

        The turn runs again from the checkpoint before the message, with `message` (the
        same text when `None`), as a new task on a new branch that becomes the head.
        Nothing of the other branch is reused: every call goes through the tool policy
        again, and anything not read-only asks (`ducklm.runtime.branches`).

        Raises:
            BranchError: No message starts at `checkpoint_id`; raised when iteration starts.
        """
        fork_point, text = await self.branches.fork_of(thread_id, checkpoint_id)
        text = text if message is None else message
        task = TaskRef(task_id or new_task_id(), text, bump_conversation=True)
        self._prefetch_embedding(text)
        graph_input: dict[str, Any] = {"messages": [HumanMessage(content=text)]}
        async for item in self._stream(
            graph_input, thread_id, task, critic, memory, checkpoint_id=fork_point
        ):
            yield item

    async def switch_branch(self, thread_id: str, checkpoint_id: str) -> str:
        """Show the version of a message that starts at `checkpoint_id`; the new head's id.

        The caller holds the thread (no run goes on). Raises `BranchError` as `fork` does.
        """
        async with self.reviews.hold(thread_id, DEFERRED_FOR_MESSAGE):
            return await self.branches.switch(thread_id, checkpoint_id)

    async def _turn_input(self, thread_id: str) -> str:
        saver = self.graph.checkpointer
        assert isinstance(saver, BaseCheckpointSaver)  # compiled with one in `open`
        async for found in saver.alist(
            thread_config(thread_id), filter={"source": "input"}, limit=1
        ):
            return str(found.config["configurable"]["checkpoint_id"])
        raise LookupError(f"thread {thread_id!r} has no checkpoints")

    async def pending_request(self, thread_id: str) -> tuple[str, HITLRequest]:
        """The id and payload of the question `thread_id` is paused at.

        Raises:
            NotWaitingError: The thread is not paused at a question.
        """
        snapshot = await self.states.snapshot(thread_id)
        if not snapshot.interrupts:
            raise NotWaitingError(f"thread {thread_id!r} is not waiting for a decision")
        item = snapshot.interrupts[0]
        return item.id, item.value

    async def update_state(
        self,
        thread_id: str,
        values: dict[str, Any] | Any,
        *,
        as_node: str | None = None,
        checkpoint_id: str | None = None,
    ) -> RunnableConfig:
        """Write `values` as if `as_node` had run; the new checkpoint's config.

        The caller holds the thread (no run may go on meanwhile) and has checked that a
        `workspace` in `values` is allowed. A review behind the last answer is deferred
        as for a new message: its results land whole before the update or not at all,
        so the update is never written past (a review writing to the latest checkpoint
        made the two siblings, and the update was lost).

        Without `as_node` an update of a thread at rest (answered, nothing next) is the
        memory policy's, the turn's last node: the thread stays at rest, as LangGraph
        shows the graph run whole. LangGraph would pick the last node that ran, the
        answer's, whose route leads to the critic once a review behind it has run.

        Raises:
            InvalidUpdateError, ValueError, KeyError: LangGraph refused the update.
        """
        config = thread_config(thread_id, checkpoint_id)
        async with self.reviews.hold(thread_id, DEFERRED_FOR_UPDATE):
            if as_node is None and await self._at_rest(thread_id, checkpoint_id):
                as_node = AT_REST
            return await self.graph.aupdate_state(config, values, as_node=as_node)

    async def _at_rest(self, thread_id: str, checkpoint_id: str | None) -> bool:
        """Whether the thread (at `checkpoint_id`) holds a turn that ran to its end."""
        snapshot = await self.states.snapshot(thread_id, checkpoint_id)
        return bool(snapshot.values) and not snapshot.next and not snapshot.interrupts

    async def pending(self, task: TaskRecord) -> list[Event]:
        """The question `task` waits at, as the event that asked it (empty if none)."""
        if task.status != "interrupted":
            return []
        snapshot = await self.states.snapshot(task.thread_id)
        ids = {"task_id": task.task_id, "thread_id": task.thread_id}
        return [{**question_event(item), **ids} for item in snapshot.interrupts[:1]]

    async def messages(self, thread_id: str) -> list[AnyMessage]:
        """The conversation of `thread_id` (empty for an unknown thread)."""
        snapshot = await self.states.snapshot(thread_id)
        messages: list[AnyMessage] = snapshot.values.get("messages", [])
        return messages

    async def transcript(self, thread_id: str) -> list[Exchange]:
        """The conversation as it happened: one exchange per message (`runtime.transcript`)."""
        # Tasks that answered on another branch would lend this one their facts.
        hidden = await self.branches.off_branch_tasks(thread_id)
        messages = await self.messages(thread_id)
        return await read_transcript(self._deps.stores, thread_id, messages, hidden=hidden)

    async def version_transcripts(self, thread_id: str) -> list[list[Exchange]]:
        """Every version of the conversation as it happened, the one shown first."""
        return [
            await read_transcript(self._deps.stores, thread_id, v.messages, hidden=v.hidden)
            for v in await self.branches.versions(thread_id)
        ]

    async def state(self, thread_id: str) -> DuckState | None:
        """The whole state of `thread_id`, or `None` for an unknown thread."""
        snapshot = await self.states.snapshot(thread_id)
        return DuckState(**snapshot.values) if snapshot.values else None

    async def task(self, task_id: str) -> TaskRecord | None:
        """The task `task_id`, or `None`."""
        return await self._deps.stores.tasks.get(task_id)

    async def tasks(self, thread_id: str | None = None, *, limit: int = 50) -> list[TaskRecord]:
        """Tasks, newest first, of one thread or of all."""
        return await self._deps.stores.tasks.list(thread_id, limit=limit)

    async def waiting_task(self, thread_id: str) -> TaskRecord | None:
        """The thread's latest task if it waits for an answer (no new turn may start)."""
        latest = await self.tasks(thread_id, limit=1)
        return latest[0] if latest and latest[0].status == "interrupted" else None

    async def waiting_count(self) -> int:
        """How many tasks wait for the person's answer (a question, a password)."""
        found = await self._deps.stores.tasks.open_tasks()
        return sum(task.status == "interrupted" for task in found)

    async def abandon(self, task_id: str) -> bool:
        """Give up a task that waits for an answer: it ends as `cancelled`.

        The question stays in the checkpoint but is never answered; the thread's next
        message starts afresh. `False` when the task is not waiting.
        """
        task = await self._deps.stores.tasks.get(task_id)
        if task is None or task.status != "interrupted":
            return False
        async with self._deps.stores.db.transaction():
            await self._deps.stores.tasks.set_status(task_id, "cancelled")
            await self._deps.stores.audit.append(
                task.thread_id,
                None,
                event(
                    "done", **done_fields("cancelled", task_id=task_id, thread_id=task.thread_id)
                ),
            )
        return True

    async def request_cancel(self, task_id: str) -> bool:
        """Ask whichever process runs `task_id` to cancel it; `False` if it does not run."""
        return await self._deps.stores.runs.request_cancel(task_id)

    async def runs_to_stop(self, run_ids: list[str]) -> list[tuple[str, bool]]:
        """Which of this process's running runs must stop, each with whether it was lost.

        Lost: taken over by another process; else a cancel was asked for it elsewhere.
        """
        return await self._deps.stores.runs.to_stop(run_ids)

    async def forget_thread(self, thread_id: str) -> None:
        """Delete a conversation: checkpoints, tasks, runs, events, episodes (facts stay)."""
        await self.reviews.cancel(thread_id)  # a review must not write to what is deleted
        await self.graph.checkpointer.adelete_thread(thread_id)  # type: ignore[union-attr]
        await self._deps.stores.conversations.delete(thread_id)
        if self._deps.context.episodes is not None:
            await self._deps.context.episodes.delete_conversation(thread_id)

    async def copy_thread(self, source: str, target: str) -> bool:
        """A new conversation `target`: the checkpoints, title and workspace of `source`.

        The copy's history is the source's (every checkpoint, so it can be forked and
        replayed); its audit starts empty: the source's tasks, runs and events (and the
        undo of their file changes) stay with the source alone. `False` if `source` is
        not a conversation.
        """
        original = await self._deps.stores.conversations.get(source)
        if original is None:
            return False
        conversations = self._deps.stores.conversations
        await conversations.create(target, title=original.title, workspace=original.workspace)
        try:
            await copy_checkpoints(self.graph.checkpointer, source, target)  # type: ignore[arg-type]
        except BaseException:
            await conversations.delete(target)
            raise
        # The copy answers with the model its source does.
        await self._chosen_models.set(target, await self._chosen_models.get(source))
        return True

    async def reindex_episodes(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Index every conversation's messages again from the checkpoints; the count."""
        if self.episode_writer is not None:
            await self.episode_writer.idle()
        episodes, stores = self._deps.context.episodes, self._deps.stores
        if episodes is None:
            return 0
        load = turn_loader(self.graph, str(self.settings.workspace))
        return await reindex_conversations(
            episodes, load, stores.conversations, stores.tasks, progress
        )

    async def reviewed(self, thread_id: str) -> list[Event]:
        """Wait for the review behind the thread's last answer; its events, in order.

        Empty when the last run was no review (the turn had critic and memory off, or
        they ran inside it: `DUCK_REVIEW_BEHIND=false`).
        """
        await self.reviews.wait(thread_id)
        stores = self._deps.stores
        runs = await stores.runs.for_thread(thread_id)
        if not runs or runs[-1].kind != "review":
            return []
        return [r.data for r in await stores.audit.list(thread_id, run_id=runs[-1].run_id)]

    def review_state(self, thread_id: str) -> ReviewState:
        """Whether a review of the thread runs now, waits for the thread, or none is due."""
        return self.reviews.state(thread_id)

    def review_pending(self, thread_id: str) -> bool:
        """Whether a review of the thread runs or waits (the CLI finishes it before exiting)."""
        return self.reviews.pending(thread_id)

    async def finish_review(self, thread_id: str) -> None:
        """Return once no review of the thread runs or waits."""
        await self.reviews.wait(thread_id)

    async def skip_review(self, thread_id: str) -> int:
        """Skip the thread's reviews, recorded as skipped by the person; how many."""
        return await self.reviews.skip(thread_id)

    async def model_server(self) -> ModelServer:
        """The answering roles' model server: its state and the models it offers."""
        thinker = self._deps.context.models.config("thinker")
        return await model_server(thinker.base_url, thinker.model)

    async def model_of(self, thread_id: str) -> str | None:
        """The model chosen for `thread_id`'s answers; `None`: the configured one."""
        return await self._chosen_models.get(thread_id)

    async def choose_model(self, thread_id: str, model: str | None) -> str | None:
        """Answer `thread_id`'s later turns with `model` (`None`: the configured one).

        The history stays as it is; the thinker and action roles of the next turn ask
        `model` on their server (`ducklm.runtime.model_choice`). Returns what is stored.

        Raises:
            UnknownModelError: The server does not offer `model` (the message lists them).
            ModelsUnavailableError: The server's models cannot be read now.
        """
        if model is not None:
            server = await self.model_server()
            model = check_model(model, server)
            if model == server.default:
                model = None  # the configured one: nothing to remember
        await self._chosen_models.set(thread_id, model)
        return model

    async def runs(self, thread_id: str) -> list[RunRecord]:
        """The runs of `thread_id`, oldest first."""
        return await self._deps.stores.runs.for_thread(thread_id)

    async def run_record(self, thread_id: str, run_id: str) -> RunRecord | None:
        """The run `run_id` of `thread_id` (one read by its key), or `None`."""
        record = await self._deps.stores.runs.get(run_id)
        return record if record is not None and record.thread_id == thread_id else None

    async def running_turns(self, thread_id: str) -> list[RunRecord]:
        """The turns of `thread_id` running now, in this process or another one."""
        return await self._deps.stores.runs.running_turns(thread_id)

    async def events(self, thread_id: str, *, after: int = 0) -> list[AuditRecord]:
        """The audited events of `thread_id` with `seq > after`."""
        return await self._deps.stores.audit.list(thread_id, after=after)

    async def approval_rules(self) -> list[ApprovalRule]:
        """Actions allowed forever."""
        return await self._deps.context.approvals.list()

    async def revoke_rule(self, rule_id: int) -> bool:
        """Forget an allow-forever rule; `False` when there is no such rule."""
        return await self._deps.context.approvals.revoke(rule_id)

    async def undo(
        self,
        thread_id: str,
        *,
        to_call: str | None = None,
        turn: int | None = None,
        turn_of: str | None = None,
        force: bool = False,
        dry_run: bool = False,
    ) -> UndoResult:
        """Roll back what DuckLM changed in the workspace (`ducklm.undo`).

        The last turn's changes by default; `to_call` rolls back that tool call's
        alone, `turn` turn N's, `turn_of` the turn of that tool call. A later change of
        the same files refuses it (unless `force`). `dry_run` only says what would change.

        Raises:
            UndoError: Undo is off, nothing fits, files changed outside DuckLM or by a
                later change since (`UndoRefused`, unless `force`), or a file could not
                be restored.
        """
        if self._deps.context.undo is None:
            raise UndoError(UNDO_OFF)
        # A review behind the last answer must not hold the revert up: it runs after it.
        async with self.reviews.hold(thread_id, DEFERRED_FOR_REVERT):
            return await self._deps.context.undo.undo(
                thread_id, to_call=to_call, turn=turn, turn_of=turn_of, force=force,
                dry_run=dry_run,
            )  # fmt: skip

    async def undo_history(self, thread_id: str) -> list[dict[str, Any]]:
        """Every recorded change of `thread_id`, oldest first, with `reverted_by`.

        Raises:
            UndoError: Undo is off.
        """
        if self._deps.context.undo is None:
            raise UndoError(UNDO_OFF)
        return await self._deps.context.undo.history(thread_id)

    async def search(self, query: str, *, k: int = 20) -> ConversationSearch:
        """Conversations whose title holds `query`, and the messages said that match it."""
        return await search_conversations(
            query, self.conversations, self._deps.context.episodes,
            default_workspace=str(self.settings.workspace), k=k,
        )  # fmt: skip

    async def upload(
        self, thread_id: str, path: str, data: bytes, *, overwrite: bool = False
    ) -> Uploaded:
        """Write a file of the person's into the conversation's workspace, undoable.

        Raises:
            LookupError: No such conversation.
            WorkspaceError: Its workspace is no longer an allowed folder.
            ToolError: The path breaks the file tools' rules (`ExistingFile` without
                `overwrite`); UndoError: the workspace could not be recorded.
        """
        workspace = await self._workspace_of(thread_id)
        return await upload_file(
            self._deps.context.undo, thread_id, workspace, path, data, overwrite=overwrite
        )

    async def download(self, thread_id: str, path: str) -> tuple[str, int, AsyncIterator[bytes]]:
        """A file of the conversation's workspace: its name, size and bytes (`open_download`)."""
        return await open_download(await self._workspace_of(thread_id), path)

    async def _workspace_of(self, thread_id: str) -> Path:
        conversation = await self.conversations.get(thread_id)
        if conversation is None:
            raise LookupError(f"no conversation with id {thread_id!r}")
        return await resolve_workspace(self.settings, conversation.workspace)

    async def _new_task(
        self,
        graph_input: dict[str, Any],
        thread_id: str,
        task: TaskRef,
        *,
        workspace: str | None,
        critic: bool,
        memory: bool,
    ) -> AsyncIterator[Event]:
        # Every door (server, library, CLI) gets the same rule: only folders the person
        # allowed in DUCK_WORKSPACE / DUCK_WORKSPACES; `None` keeps the thread's own.
        chosen = await requested_workspace(self.settings, workspace)
        if chosen is not None:
            graph_input["workspace"] = chosen
            task = replace(task, workspace=chosen)
        assert task.message is not None  # a new task always has its message
        self._prefetch_embedding(task.message)
        async for item in self._stream(graph_input, thread_id, task, critic, memory):
            yield item

    def _prefetch_embedding(self, message: str) -> None:
        # Skill selection and recall both embed the request before the first model call;
        # starting now overlaps the encode with the database writes and the graph's
        # start, and the embedder's query cache hands the vector to both.
        memory = self._deps.context.memory
        if memory is None or not message.strip() or self._deps.context.embeddings.loading:
            return
        prefetch = asyncio.create_task(memory.embedder.embed([message]))
        self._prefetches.add(prefetch)
        prefetch.add_done_callback(_forget_prefetch(self._prefetches))

    async def _task_of(self, thread_id: str) -> TaskRef:
        # Threads from before tasks existed have none: their continuation starts one.
        latest = await self._deps.stores.tasks.latest(thread_id)
        return TaskRef(latest.task_id) if latest else TaskRef(new_task_id(), "")

    async def _stream(
        self,
        graph_input: dict[str, Any] | Command[Any] | None,
        thread_id: str,
        task: TaskRef,
        critic: bool = True,
        memory: bool = True,
        *,
        checkpoint_id: str | None = None,
        options: GraphOptions | None = None,
    ) -> AsyncIterator[Event]:
        # The switches reach the graph through the context node, which copies them into
        # the state when a turn starts; a resume changes them with a state update instead.
        behind = self.settings.review_behind
        writer = self.episode_writer
        # A review behind an earlier answer never delays this run: it is deferred, and
        # runs (from its answer's checkpoint) once the thread is idle. Episodes are
        # written when no run goes on (`EpisodeWriter.hold`).
        # The conversation's chosen model, read at each run: a choice made since applies.
        model = await self._chosen_models.get(thread_id)
        context = self._deps.context.for_run(
            critic=critic, memory=memory, review_behind=behind, model=model
        )
        async with self.reviews.hold(thread_id, DEFERRED_FOR_MESSAGE):
            with writer.hold() if writer is not None else nullcontext():
                async for item in stream_run(
                    self.graph,
                    graph_input,
                    thread_id=thread_id,
                    task=task,
                    context=context,
                    stores=self._deps.stores,
                    checkpoint_id=checkpoint_id,
                    options=options,
                    reviews=self.reviews.submit,
                    observer=self.observer,
                ):
                    if item["type"] == "done" and writer is not None:
                        writer.note(thread_id)  # returns at once; indexing follows
                    yield item


def _forget_prefetch(tasks: set[asyncio.Task[Any]]) -> Callable[[asyncio.Task[Any]], None]:
    def done(task: asyncio.Task[Any]) -> None:
        tasks.discard(task)
        # A failed prefetch is not an error: the nodes embed again and handle it there.
        if not task.cancelled() and task.exception() is not None:
            log.debug("embedding prefetch failed", exc_info=task.exception())

    return done


def _with(update: Any, changes: dict[str, Any]) -> Any:
    """A client's `Command.update` (a dict or `(key, value)` pairs) plus `changes`."""
    if not changes:
        return update
    if isinstance(update, list):
        return [*update, *changes.items()]
    return {**(update or {}), **changes}


async def _collect(events: AsyncIterator[Event]) -> RunResult:
    collected = [item async for item in events]
    done = collected[-1]
    return RunResult(
        thread_id=done["thread_id"],
        task_id=done["task_id"],
        status=done["status"],
        answer=done["answer"],
        events=collected,
    )


__all__ = ["DecisionError", "DuckLM", "NotWaitingError", "RunResult", "new_thread_id"]
