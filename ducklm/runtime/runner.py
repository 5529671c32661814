"""Runs the compiled graph and turns its stream into DuckLM events.

The stream is always consumed to its end, even past an interrupt: a caller that leaves
`astream` early can lose the checkpoint that holds the interrupt (seen on this
machine), and then the run could not be resumed.

Events between a run's first and last are numbered at once and written a moment later,
in batches (`ducklm.runtime.audit_buffer`): LangGraph moves from one superstep to the next
inside `astream`, so a consumer that awaited each audit write there held the graph up
(measured: 1.2 ms of the first token went to writing `route_decided` before the
action node could start). The first event (with the run's rows) and the last (after
every buffered one has landed) are written before they are passed on.

A turn whose critic and memory policy run behind the answer (`DuckState.review_due`)
ends at the answer: `done` comes with it. Its review run is recorded in the same
transaction as the turn's end, so a process that stops in between leaves a review run
for recovery to record as skipped, and `stream_review` runs it (`ducklm.runtime.reviews`
schedules it behind the turn, and defers it while the thread runs again).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, Interrupt

from ducklm.graph.builder import DuckGraph, ReviewGraph
from ducklm.graph.context import DuckContext
from ducklm.graph.state import DuckState
from ducklm.kit.events import UNAUDITED, Event, EventType, RunStatus, done_fields, event
from ducklm.models.errors import describe_failure
from ducklm.models.roles import RoleName
from ducklm.runtime.answer_facts import AnswerClock
from ducklm.runtime.audit_buffer import AuditBuffer
from ducklm.runtime.channel import GraphChunk, RunChannel
from ducklm.runtime.graph_stream import EVENTS, graph_chunks
from ducklm.runtime.observer import RunObserver
from ducklm.runtime.reaper import LEASE_LOST
from ducklm.runtime.states import thread_config
from ducklm.stores import RunStores, ThreadRunning
from ducklm.stores.runs import DEFERRED
from ducklm.tools.hitl import is_password_request, is_server_question

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskRef:
    """Which task a run belongs to; `message` is set for the run that starts it.

    `bump_conversation`: the run brings the conversation a new message, so its row is
    created (titled by `message`, in `workspace`) or moved to the top of the list, in
    the same transaction as the run's own rows.
    """

    task_id: str
    message: str | None = None
    bump_conversation: bool = False
    workspace: str | None = None
    opening: tuple[Event, ...] = ()
    """Events the door tells right after `run_started`: what the run brings
    (`message_sent`, and `conversation_untrusted` for an untrusted attachment)."""


@dataclass(frozen=True)
class ReviewRef:
    """A review run recorded behind an answered turn: its thread, task and run id."""

    thread_id: str
    task_id: str
    run_id: str
    checkpoint_id: str | None = None
    """The checkpoint of the answer it reviews; `None` until read (nothing has run since)."""
    deferred: bool = False
    """Its run is recorded as deferred: it waits for the thread to be idle."""


@dataclass(frozen=True)
class ReviewStop:
    """Why a review stops before its end: `deferred` (it runs later) or skipped, and why."""

    deferred: bool
    reason: str


ReviewSink = Callable[[ReviewRef], None]
"""Receives each review run recorded at a turn's end; must not block or await."""

REVIEW_STOPPED = "stopped before it ended"
"""Why a stopped review is recorded as skipped (DuckLM closed, or its thread went)."""

ChunkSink = Callable[[GraphChunk], None]
"""Receives each chunk of the graph's stream a door watches; must not block or await."""


@dataclass(frozen=True)
class GraphOptions:
    """What a door asks of the graph run beyond DuckLM's defaults (the Agent Protocol's).

    `watch` receives every chunk of `watch_modes` (LangGraph's `values`, `updates`,
    `messages`, `debug`) as the graph streams it, before the run's events of that chunk:
    those modes carry the whole state and each message chunk, which DuckLM's events do
    not. They are never audited. With `watch_events` it also gets LangChain's
    `astream_events` (mode `events`); with `subgraphs`, subgraphs' chunks too
    (`ducklm.runtime.graph_stream`).
    """

    checkpoint_id: str | None = None
    interrupt_before: Any = None
    interrupt_after: Any = None
    recursion_limit: int | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    watch: ChunkSink | None = None
    watch_modes: frozenset[str] = frozenset()
    watch_events: bool = False
    subgraphs: bool = False
    callback_run_id: str | None = None
    """The id LangChain's callbacks (`astream_events`) give the graph's run: a door's own
    run id, where it has one; else DuckLM's."""


class _Run:
    """The bookkeeping of one run: ids, status, answer, and event stamping."""

    def __init__(
        self,
        thread_id: str,
        task: TaskRef,
        stores: RunStores,
        run_id: str | None = None,
        observer: RunObserver | None = None,
    ) -> None:
        self.thread_id = thread_id
        self.observer = observer
        self.task = task
        self.run_uuid = uuid.UUID(run_id) if run_id else uuid.uuid4()
        self.run_id = str(self.run_uuid)
        self.stores = stores
        self.status: RunStatus = "completed"
        self.answer = ""
        self.pieces: list[str] = []
        """The answer text streamed so far (`token`s, less what `answer_cut` dropped)."""
        self.error: str | None = None
        self.review_due = False
        self.buffer = AuditBuffer(stores.audit, thread_id, self.run_id)
        self.clock = AnswerClock()
        """The answer's timing, model and tokens, for `answer_facts`."""
        self.answered_by: str | None = None
        """The node that set the answer (`thinker`, or `action` answering natively)."""

    async def record(self, type_: EventType | str, data: dict[str, Any]) -> Event:
        """Stamp and write an event now (the first and the last of a run)."""
        item = self._stamp(type_, data)
        if type_ not in UNAUDITED:
            item["seq"] = await self.stores.audit.append(self.thread_id, self.run_id, item)
        return item

    def note(self, type_: EventType | str, data: dict[str, Any]) -> Event:
        """Stamp an event between the first and the last; its write follows shortly."""
        item = self._stamp(type_, data)
        self.clock.see(type_, data)
        if type_ == "token":
            self.pieces.append(str(data.get("text") or ""))
        elif type_ == "answer_cut" and int(data.get("dropped") or 0) > 0:
            self.pieces = [self.streamed[: -int(data["dropped"])]]
        if type_ not in UNAUDITED:
            item["seq"] = self.buffer.add(item)
        return item

    @property
    def streamed(self) -> str:
        """The text the person saw stream: what a stopped run's `done` keeps."""
        return "".join(self.pieces)

    def _stamp(self, type_: EventType | str, data: dict[str, Any]) -> Event:
        item = {
            **data,
            "type": type_,
            "thread_id": self.thread_id,
            "task_id": self.task.task_id,
            "run_id": self.run_id,
        }
        if self.observer is not None:
            self.observer.saw(item)
        return item


async def stream_run(
    graph: DuckGraph,
    graph_input: dict[str, Any] | Command[Any] | None,
    *,
    thread_id: str,
    task: TaskRef,
    context: DuckContext,
    stores: RunStores,
    checkpoint_id: str | None = None,
    options: GraphOptions | None = None,
    reviews: ReviewSink | None = None,
    observer: RunObserver | None = None,
) -> AsyncIterator[Event]:
    """Run `graph` on `thread_id` as a run of `task` and yield DuckLM events, ending with `done`.

    When the turn ends at its answer with the review still due, its review run is
    recorded with the turn's end and handed to `reviews` (without one, it is not run).

    With `checkpoint_id` the run starts from that earlier checkpoint instead of the
    latest (LangGraph time travel): what follows it runs again, as a fork of the thread.
    `options` carry what a door asks of the graph beyond that (see `GraphOptions`);
    `observer` sees every event and root step as it passes (`ducklm.runtime.observer`).

    Never raises for a failed run: the failure is an `error` event (a message for
    people, not exception text) and a `done` with status `failed`. A cancelled run is
    recorded as `cancelled` before the cancellation goes on up.

    Raises:
        ThreadRunning: Another run of the thread is recorded as running (in this process
            or another one sharing the database); nothing is recorded for this one.
    """
    run = _Run(thread_id, task, stores, observer=observer)
    yield await _start(run)
    for item in task.opening:
        yield run.note(item["type"], {k: v for k, v in item.items() if k != "type"})
    options = options or GraphOptions(checkpoint_id=checkpoint_id)
    try:
        # The input is a dict or a Command; the graph coerces it to its input schema.
        graph_run = _graph_events(
            run, graph, cast(Any, graph_input), _config(run, options), context, options=options
        )
        async with contextlib.aclosing(graph_run) as items:
            async for item in items:
                yield item
    except asyncio.CancelledError:
        run.status = "cancelled"
        # Shielded: the bookkeeping must land although this task is being cancelled.
        await asyncio.shield(_finish(run))
        raise
    except Exception as exc:  # a failed run is reported, never raised at the person
        log.exception("run %s on thread %s failed", run.run_id, thread_id)
        run.status, run.error = "failed", await describe_failure(exc, context.settings)
        yield run.note("error", {"message": run.error, "fatal": True})
    if (facts := run.clock.fields(_answered_by(context, run.answered_by))) is not None:
        yield run.note("answer_facts", facts)
    review = _review_of(run) if reviews is not None else None
    done = await _finish(run, review)
    if review is not None:
        # Before `done` is passed on: a consumer may stop at `done`, and the review it
        # recorded as running must still run (and end) rather than hold the thread.
        cast(ReviewSink, reviews)(review)
    yield done


async def stream_review(
    graph: DuckGraph,
    reviewers: ReviewGraph,
    review: ReviewRef,
    *,
    context: DuckContext,
    stores: RunStores,
) -> AsyncIterator[Event]:
    """Run the critic and memory policy of an answered turn, as the review run `review`.

    They run on `reviewers` (`build_review_graph`, no checkpointer) over the thread's
    state at `review.checkpoint_id`, the answer's: so a review that was deferred reviews
    the turn it belongs to, whatever ran on the thread since. When nothing has, their
    results are written to the thread's state as the memory policy's step.

    Yields `review_started`, the reviewers' events and `review_finished` (status
    `completed` or `failed`), all audited under the review's run id; the turn's task
    keeps the status and answer its turn gave it. A cancelled review writes what it has
    and lets the cancellation go on up: its caller records how it stopped
    (`close_review`).

    Raises:
        ThreadRunning: A deferred review's thread runs again (another process); nothing
            is recorded.
    """
    run = _Run(review.thread_id, TaskRef(review.task_id), stores, run_id=review.run_id)
    config = _config(run, GraphOptions())
    started = await _start_review(run, again=review.deferred)
    run.buffer.start_after(started["seq"])
    yield started
    tail: asyncio.Task[None] | None = None
    try:
        values = await _answered_state(graph, review)
        if values is not None:
            found: dict[str, Any] = {}
            watch = GraphOptions(watch=_merge_updates(found), watch_modes=frozenset({"updates"}))
            graph_run = _graph_events(run, reviewers, values, config, context, options=watch)
            async with contextlib.aclosing(graph_run) as items:
                async for item in items:
                    yield item
            # Once the reviewers are done their results land whatever comes: a caller that
            # stops the review now must find it ended, not half written.
            tail = asyncio.create_task(_write_back(graph, review, found))
            await asyncio.shield(tail)
    except asyncio.CancelledError:
        if tail is not None:
            await asyncio.wait([tail])
            if not tail.cancelled() and tail.exception() is None:
                await asyncio.shield(_finish_review(run))
        await asyncio.shield(run.buffer.flush())
        raise
    except Exception as exc:  # a failed review is recorded; the answer stands
        log.exception("review %s on thread %s failed", run.run_id, review.thread_id)
        run.status, run.error = "failed", await describe_failure(exc, context.settings)
        yield run.note("error", {"message": run.error, "fatal": False})
    yield await _finish_review(run)


async def answered_checkpoint(graph: DuckGraph, thread_id: str) -> str | None:
    """The id of `thread_id`'s latest checkpoint (a review's, read while nothing runs)."""
    saver = graph.checkpointer
    assert isinstance(saver, BaseCheckpointSaver)  # the facade compiles with one
    found = await saver.aget_tuple(thread_config(thread_id))
    return None if found is None else str(found.config["configurable"]["checkpoint_id"])


async def close_review(stores: RunStores, review: ReviewRef, stop: ReviewStop) -> bool:
    """Record that `review` stopped before its end: deferred, or skipped for good.

    Called once the review's task has ended (its events are written); `False` when its
    run had ended already (the review finished before the stop reached it). A review
    deferred already stays so, with nothing more recorded.
    """
    ids = {"thread_id": review.thread_id, "task_id": review.task_id, "run_id": review.run_id}
    async with stores.db.transaction():
        record = await stores.runs.get(review.run_id)
        if record is None or record.status not in ("running", DEFERRED):
            return False
        if stop.deferred and record.status == DEFERRED:
            return True  # deferred already: nothing new to record
        if stop.deferred:
            await stores.runs.defer(review.run_id)
            closing = event("review_deferred", reason=stop.reason, **ids)
        else:
            await stores.runs.finish(review.run_id, "cancelled", error=stop.reason)
            closing = event("review_skipped", reason=stop.reason, **ids)
        await stores.audit.append(review.thread_id, review.run_id, closing)
    return True


async def _start_review(run: _Run, *, again: bool) -> Event:
    if not again:  # its row was written with the turn's end
        return await run.record("review_started", {})
    async with run.stores.db.transaction():
        if not await run.stores.runs.undefer(run.run_id):
            raise ThreadRunning(f"review {run.run_id!r} is no longer deferred")
        return await run.record("review_started", {})


async def _answered_state(graph: DuckGraph, review: ReviewRef) -> dict[str, Any] | None:
    """The reviewers' input: the state at the answer, if its review is still due."""
    snapshot = await graph.aget_state(thread_config(review.thread_id, review.checkpoint_id))
    values = snapshot.values
    if not values.get("review_due"):
        return None  # reviewed already (or no such turn): nothing to do
    return {**{k: v for k, v in values.items() if k in _STATE_FIELDS}, "review_due": False}


def _merge_updates(found: dict[str, Any]) -> ChunkSink:
    def merge(chunk: GraphChunk) -> None:
        data = chunk.data
        for update in data.values() if isinstance(data, dict) else ():
            if isinstance(update, dict):
                found.update(update)

    return merge


async def _write_back(graph: DuckGraph, review: ReviewRef, found: dict[str, Any]) -> None:
    """The reviewers' results into the thread's state, if it is still at the answer."""
    if await answered_checkpoint(graph, review.thread_id) != review.checkpoint_id:
        return  # the thread moved on: the next turn started afresh
    update = {**found, "review_due": False}
    await graph.aupdate_state(thread_config(review.thread_id), update, as_node="memory_policy")


_STATE_FIELDS = frozenset(f.name for f in dataclasses.fields(DuckState))


def _review_of(run: _Run) -> ReviewRef | None:
    if run.status != "completed" or not run.review_due:
        return None
    return ReviewRef(run.thread_id, run.task.task_id, str(uuid.uuid4()))


def _chunk(
    run: _Run, chunk: GraphChunk, options: GraphOptions, watched: frozenset[str]
) -> list[Event]:
    if chunk.mode in watched:
        cast(ChunkSink, options.watch)(chunk)
    # A subgraph's updates are its own steps: the run's answer and questions are the root's.
    root_update = chunk.mode == "updates" and not chunk.namespace
    if root_update and run.observer is not None and isinstance(chunk.data, dict):
        run.observer.stepped(run.run_id, list(chunk.data))
    return _translate(run, chunk.data) if root_update else []


async def _graph_events(
    run: _Run,
    graph: DuckGraph | ReviewGraph,
    graph_input: Any,
    config: RunnableConfig,
    context: DuckContext,
    *,
    options: GraphOptions,
) -> AsyncGenerator[Event, None]:
    """The graph's run as `run`'s events: the nodes' through the channel, the rest translated.

    The graph runs in a task of its own feeding the channel (`ducklm.runtime.channel`);
    when the reader stops (done, failed, cancelled or closed early) the task is stopped
    and waited for, so no node runs on after the run's bookkeeping.
    """
    watched = options.watch_modes if options.watch is not None else frozenset()
    events = options.watch_events and options.watch is not None
    channel = RunChannel()
    # The nodes' events come through the channel, so the graph streams no `custom` mode.
    chunks = graph_chunks(
        graph,
        graph_input,
        config,
        modes=sorted({"updates", *watched}),
        subgraphs=options.subgraphs,
        events=events,
        context=dataclasses.replace(context, events=channel.put),
        interrupt_before=options.interrupt_before,
        interrupt_after=options.interrupt_after,
    )
    if events:
        watched = watched | {EVENTS}
    pump = asyncio.create_task(channel.pump(chunks), name=f"ducklm-run-{run.run_id}")
    try:
        async for item in channel.items():
            if isinstance(item, GraphChunk):
                for found in _chunk(run, item, options, watched):
                    yield run.note(found["type"], found)
            else:
                yield run.note(item["type"], item)
    finally:
        if not pump.done():
            pump.cancel()
            await asyncio.wait([pump])


def _config(run: _Run, options: GraphOptions) -> RunnableConfig:
    configurable: dict[str, Any] = {"thread_id": run.thread_id}
    if options.checkpoint_id is not None:
        configurable["checkpoint_id"] = options.checkpoint_id
    callback_id = options.callback_run_id
    run_uuid = uuid.UUID(callback_id) if callback_id else run.run_uuid
    config: RunnableConfig = {"configurable": configurable, "run_id": run_uuid}
    # The run's id reaches tracing (OpenInference puts metadata on spans); a door's own
    # run id, which its metadata carries already, wins.
    config["metadata"] = {"run_id": run.run_id, **options.metadata}
    if options.recursion_limit is not None:
        config["recursion_limit"] = options.recursion_limit
    if options.tags:
        config["tags"] = options.tags
    return config


async def _start(run: _Run) -> Event:
    # The run's and the task's rows commit with the first audit event, or not at all:
    # `ThreadRunning` (another run of the thread, maybe in another process) leaves nothing.
    stores, task = run.stores, run.task
    async with stores.db.transaction():
        await stores.runs.start(run.run_id, run.thread_id, task.task_id)
        if task.bump_conversation:
            await stores.conversations.touch(run.thread_id, task.message or "", task.workspace)
        if task.message is not None:
            await stores.tasks.start(task.task_id, run.thread_id, task.message)
        else:
            await stores.tasks.set_status(task.task_id, "running")
        started = await run.record("run_started", {})
    run.buffer.start_after(started["seq"])
    return started


async def _finish(run: _Run, review: ReviewRef | None = None) -> Event:
    stores = run.stores
    answer = run.answer or None
    await run.buffer.flush()  # `done` is the last event, in the table as on the wire
    async with stores.db.transaction():
        if not await stores.runs.finish(run.run_id, run.status, answer=answer, error=run.error):
            return _taken_over(run)
        await stores.tasks.set_status(run.task.task_id, run.status, answer=answer, error=run.error)
        if review is not None:  # with the turn's end, so no stop in between can lose it
            await stores.runs.start(review.run_id, run.thread_id, review.task_id, kind="review")
        # Tokens are not audited: a run stopped or failed mid-answer keeps the text the
        # person saw in its `done`, so the conversation shows it when opened again.
        shown = run.answer or (run.streamed if run.status in ("cancelled", "failed") else "")
        return await run.record("done", done_fields(run.status, shown))


async def _finish_review(run: _Run) -> Event:
    await run.buffer.flush()
    async with run.stores.db.transaction():
        if not await run.stores.runs.finish(run.run_id, run.status, error=run.error):
            return _taken_over(run)
        return await run.record("review_finished", {"status": run.status})


def _taken_over(run: _Run) -> Event:
    """The end of a run another process took over: for this process's clients only.

    This process stalled past its lease (`ducklm.runtime.reaper`) and was stopped (or
    ran on) meanwhile; the run's task goes on there, so nothing of this end is written.
    """
    log.warning(
        "run %s of thread %s was taken over elsewhere: %s", run.run_id, run.thread_id, LEASE_LOST
    )
    return run._stamp("done", done_fields("interrupted", reason=LEASE_LOST))


def _translate(run: _Run, chunk: Any) -> list[Event]:
    if not isinstance(chunk, dict):
        return []
    if "__interrupt__" in chunk:
        run.status = "interrupted"
        return [question_event(i) for i in chunk["__interrupt__"]]
    for node, update in chunk.items():  # the thinker, or the action role when it answered
        if isinstance(update, dict) and update.get("final"):
            run.answer, run.answered_by = update["final"], str(node)
            run.review_due = bool(update.get("review_due"))
    return []


def _answered_by(context: DuckContext, node: str | None) -> tuple[str, str] | None:
    """The role and model of the node that set the answer (`answer_facts`' fallback)."""
    if node not in ("thinker", "action"):
        return None
    role: RoleName = "thinker" if node == "thinker" else "action"
    return role, context.models.config(role).model


def question_event(item: Interrupt) -> Event:
    """The event that puts a paused run's question to the person, by the question's kind.

    Decided here alone: the live run and every reading of a paused one (`DuckLM.pending`)
    name a question the same way.
    """
    if is_password_request(item.value):
        return event("password_requested", interrupt_id=item.id, request=item.value)
    if is_server_question(item.value):
        return event("elicitation_requested", interrupt_id=item.id, request=item.value)
    return event("approval_requested", interrupt_id=item.id, request=item.value)
