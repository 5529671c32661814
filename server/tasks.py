"""The task hub: runs belong to the server, not to the connection that started them.

A task's run is a background asyncio task; its events are kept in a `LiveTask` that any
number of SSE clients follow from the start. A client that disconnects stops following
and nothing else: the run goes on to its end or its next question, and a reload
re-attaches. Only `cancel` stops a run. One run at a time per thread: the hub claims
the thread before anything awaits, so two resumes of one question cannot both start.

Several servers may share one PostgreSQL database. Each event of a run is also handed to
the `Relay` (when there is one), so a client of another server follows the run live
(`follow_elsewhere.py`). A cancel for a task another server runs is written to its
run's row; every hub looks for such requests for its own runs every `CANCEL_POLL_S`,
and the asking server waits up to `CANCEL_WAIT_S` for the end.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from ducklm.kit.events import Event, RunStatus, done_fields, event
from ducklm.kit.ids import new_task_id, new_thread_id
from ducklm.runtime.channel import GraphChunk as Chunk  # what a door asked the runner for
from ducklm.runtime.facade import DuckLM, NotWaitingError
from ducklm.runtime.reaper import LEASE_LOST
from ducklm.server.busy import ThreadBusy
from ducklm.server.event_keys import START, key_after, key_text
from ducklm.stores import TaskRecord, ThreadRunning
from ducklm.stores.relay import Relay
from ducklm.tools.hitl import Answer

__all__ = ["Chunk", "LiveTask", "TaskHub", "TaskNotFound", "ThreadBusy"]

log = logging.getLogger(__name__)

CANCEL_POLL_S = 0.5
CANCEL_WAIT_S = 5.0
CLOSE_WAIT_S = 3.0


class TaskNotFound(LookupError):
    """No task has that id."""


class LiveTask:
    """The events of one running task so far, and a way to follow the rest.

    A task started with `wire=True` (the Agent Protocol door's) also keeps `wire`: its
    events and the graph's stream chunks in the order they came.
    """

    def __init__(self, task_id: str, thread_id: str, *, wire: bool = False) -> None:
        self.task_id = task_id
        self.thread_id = thread_id
        self.events: list[Event] = []
        self.keys: list[tuple[int, int]] = []
        """Each event's key in the task (`event_keys.py`), in step with `events`."""
        self._key: tuple[int, int] = START
        self.wire: list[Event | Chunk] | None = [] if wire else None
        self.run_id = ""  # the run going on now (set from its first event)
        self.finished = asyncio.Event()
        self.runner: asyncio.Task[None] | None = None
        self.taken_over = False
        """Another worker took its run over (this one stalled past its lease): it goes on
        there, so this worker stops it and tells only its own followers."""
        self._wake = asyncio.Event()

    def publish(self, item: Event) -> None:
        """Add an event and wake the followers.

        Not a coroutine on purpose: the run's driver must never be suspended between
        receiving an event and passing it on, so a cancellation always lands inside the
        run, where it is recorded.
        """
        self.keys.append(key := key_after(self._key, item))
        self._key = key
        self.events.append(item)
        if self.wire is not None:
            self.wire.append(item)
        self._wake_followers()

    def publish_chunk(self, chunk: Chunk) -> None:
        """Add a graph stream chunk to `wire` (a `runner.ChunkSink`; not a coroutine)."""
        if self.wire is not None:
            self.wire.append(chunk)
            self._wake_followers()

    def finish(self) -> None:
        """No more events will come."""
        self.finished.set()
        self._wake_followers()

    async def follow(self, start: int = 0) -> AsyncIterator[tuple[int, Event]]:
        """`(index, event)` from `start` on, live, until the task's end."""
        async for index, item in self._follow(self.events, start):
            yield index, item

    async def follow_wire(self) -> AsyncIterator[Event | Chunk]:
        """Events and stream chunks (`wire`) from the start, live, until the task's end."""
        async for _, item in self._follow(self.wire if self.wire is not None else [], 0):
            yield item

    async def _follow(self, items: list[Any], start: int) -> AsyncIterator[tuple[int, Any]]:
        index = start
        while True:
            wake = self._wake
            while index < len(items):
                yield index, items[index]
                index += 1
            if self.finished.is_set():
                return
            if wake is self._wake:  # nothing came while the follower was busy
                await wake.wait()

    def _wake_followers(self) -> None:
        self._wake.set()
        self._wake = asyncio.Event()


class TaskHub:
    """Starts, continues and cancels tasks; owns their background runs."""

    def __init__(self, duck: DuckLM, relay: Relay | None = None) -> None:
        self._duck = duck
        self.relay = relay
        """Sends the runs' events to the other servers on the database (PostgreSQL)."""
        self._live: dict[str, LiveTask] = {}
        self._busy: dict[str, str] = {}
        """Each thread held, with the id of its running task ("": a claim, or a run
        that has not started yet)."""
        self._watcher: asyncio.Task[None] | None = None

    def watch_cancels(self) -> None:
        """Start honouring cancels other processes ask for (see the module's docstring)."""
        if self._watcher is None:
            self._watcher = asyncio.create_task(self._watch(), name="ducklm-cancel-watch")

    def live(self, task_id: str) -> LiveTask | None:
        """The task while its run is going, else `None`."""
        return self._live.get(task_id)

    def running(self) -> list[str]:
        """Ids of the tasks whose run is going."""
        return list(self._live)

    def live_in(self, thread_id: str) -> LiveTask | None:
        """The running task of `thread_id`, if any."""
        return next((t for t in self._live.values() if t.thread_id == thread_id), None)

    def is_busy(self, thread_id: str) -> bool:
        """Whether a run (or a `claim`) holds `thread_id` in this process now."""
        return thread_id in self._busy

    def check_free(self, thread_id: str) -> None:
        """Refuse early, naming the running task, when a run holds `thread_id` here.

        `launch` and the others check again (this is no claim); a door calls this first
        when its own checks would otherwise answer for a busy thread less clearly.

        Raises:
            ThreadBusy: A run (or a `claim`) holds the thread.
        """
        if thread_id in self._busy:
            raise ThreadBusy.running(thread_id, self._busy[thread_id])

    async def launch(
        self,
        thread_id: str,
        run: Callable[[LiveTask], AsyncIterator[Event]],
        *,
        new_turn: bool,
    ) -> LiveTask:
        """Start a run the caller builds (the Agent Protocol door's), owned like any other.

        `run` gets the task's `LiveTask` (with `wire`) before the run starts, so it can
        hand the runner `publish_chunk`; the task's id comes from the run's first event.
        `new_turn`: the run brings a new message, refused while the thread waits.

        Raises:
            ThreadBusy: The thread runs, or (for a new turn) its last task waits.
        """
        if new_turn:
            await self._take_unless_waiting(thread_id)
        else:
            self._take(thread_id)
        live = LiveTask("", thread_id, wire=True)
        return await self._launch(live, run(live))

    @asynccontextmanager
    async def claim(self, thread_id: str, *, new_turn: bool = False) -> AsyncIterator[None]:
        """Hold `thread_id` for an operation that is not a run (a state update, a delete).

        `new_turn`: the operation moves the conversation on (a branch switch), so it is
        refused while the thread waits, as a new message is.

        Raises:
            ThreadBusy: Another run holds it, or (for a new turn) its last task waits.
        """
        if new_turn:
            await self._take_unless_waiting(thread_id)
        else:
            self._take(thread_id)
        try:
            yield
        finally:
            self._busy.pop(thread_id, None)

    async def start(
        self,
        message: str,
        *,
        thread_id: str | None,
        workspace: str | None,
        critic: bool,
        memory: bool,
        typed: bool = False,
    ) -> LiveTask:
        """Start `message` as a new task on `thread_id` (a new thread when `None`).

        `typed`: the person typed it, so its MCP prompt and mentions are expanded
        (`DuckLM.send`); other callers' messages run as they are.

        Raises:
            ThreadBusy: The thread runs, or its last task waits for an answer.
            TypedInputError: (`typed`) what it names of an MCP server cannot be used.
        """
        task_id = new_task_id()
        if thread_id is None:  # a new thread: nothing of it can be waiting
            thread_id = new_thread_id()
            self._take(thread_id, task_id)
        else:
            await self._take_unless_waiting(thread_id, task_id)
        run = self._duck.send if typed else self._duck.stream
        events = run(
            message,
            thread_id=thread_id,
            workspace=workspace,
            critic=critic,
            memory=memory,
            task_id=task_id,
        )
        return await self._launch(LiveTask(task_id, thread_id), events)

    async def answer(
        self,
        task_id: str,
        answer: Answer,
        *,
        interrupt_id: str | None = None,
        critic: bool | None = None,
        memory: bool | None = None,
    ) -> LiveTask:
        """Answer the question `task_id` waits at (decisions or a password) and run on.

        Raises:
            TaskNotFound: No such task.
            ThreadBusy: Its thread is running.
            NotWaitingError: It does not wait for this kind of answer, or `interrupt_id`
                names another question (already answered, or never asked).
            DecisionError: The decisions do not answer the question.
        """
        task = await self._waiting(task_id)
        self._take(task.thread_id, task_id)
        # The runtime checks the answer before anything runs; `_launch` starts the stream,
        # so a bad answer is raised here, to the client, and the thread is let go.
        events = self._duck.answer(
            task.thread_id, answer, interrupt_id=interrupt_id, critic=critic, memory=memory
        )
        return await self._launch(LiveTask(task_id, task.thread_id), events)

    async def continue_task(self, task_id: str) -> LiveTask:
        """Go on with a task whose run stopped without a question (its process died).

        Raises:
            TaskNotFound: No such task.
            ThreadBusy: Its thread is running.
            NotWaitingError: It did not stop mid-run: it ended, or waits for an answer.
        """
        task = await self._waiting(task_id)
        self._take(task.thread_id, task_id)
        # As for `answer`: `continue_run` checks first, `_launch` raises what it finds.
        events = self._duck.continue_run(task.thread_id)
        return await self._launch(LiveTask(task_id, task.thread_id), events)

    async def cancel(self, task_id: str) -> str:
        """Stop a running task or give up one that waits; returns the new status.

        Raises:
            TaskNotFound: No such task.
            NotWaitingError: The task has already ended.
        """
        live = self._live.get(task_id)
        if live is not None and live.runner is not None:
            live.runner.cancel()
            await live.finished.wait()
            return "cancelled"
        task = await self._duck.task(task_id)
        if task is None:
            raise TaskNotFound(task_id)
        if task.status == "running" and await self._duck.request_cancel(task_id):
            return await self._end_of(task_id)  # another server runs it
        if not await self._duck.abandon(task_id):
            raise NotWaitingError(f"task {task_id!r} has already ended ({task.status})")
        return "cancelled"

    async def close(self) -> None:
        """Cancel every run (the server is stopping); each is recorded as cancelled.

        Waits `CLOSE_WAIT_S` at most: a run that does not end by then (its cancelled
        record stuck on a database that does not answer) is left to the process's end.
        """
        if self._watcher is not None:
            self._watcher.cancel()
            await asyncio.gather(self._watcher, return_exceptions=True)
        runners = [t.runner for t in self._live.values() if t.runner is not None]
        for runner in runners:
            runner.cancel()
        if runners:
            _, left = await asyncio.wait(runners, timeout=CLOSE_WAIT_S)
            if left:
                log.warning(
                    "%d runs did not end within %g s of their cancel", len(left), CLOSE_WAIT_S
                )

    async def _take_unless_waiting(self, thread_id: str, task_id: str = "") -> None:
        self._take(thread_id, task_id)
        try:
            if waiting := await self._duck.waiting_task(thread_id):
                raise ThreadBusy(
                    f"conversation {thread_id!r} waits for an answer to task "
                    f"{waiting.task_id!r}: answer it or cancel it first"
                )
        except BaseException:
            self._busy.pop(thread_id, None)
            raise

    async def _end_of(self, task_id: str) -> str:
        """The status of a task cancelled from here and run elsewhere, once it ends.

        "cancelling" when it has not ended within `CANCEL_WAIT_S`.
        """
        for _ in range(int(CANCEL_WAIT_S / 0.1)):
            task = await self._duck.task(task_id)
            if task is not None and task.status != "running":
                return task.status
            await asyncio.sleep(0.1)
        return "cancelling"

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(CANCEL_POLL_S)
            live = {t.run_id: t for t in self._live.values() if t.run_id}
            if not live:
                continue
            try:
                asked = await self._duck.runs_to_stop(list(live))
            except Exception:  # a database hiccup must not end the watch
                log.warning("could not look for cancel requests", exc_info=True)
                continue
            for run_id, lost in asked:
                live[run_id].taken_over = lost
                if (runner := live[run_id].runner) is not None:
                    runner.cancel()

    def _take(self, thread_id: str, task_id: str = "") -> None:
        # No await between the check and the add: two requests cannot both pass.
        self.check_free(thread_id)
        self._busy[thread_id] = task_id

    async def _waiting(self, task_id: str) -> TaskRecord:
        task = await self._duck.task(task_id)
        if task is None:
            raise TaskNotFound(task_id)
        if task.status != "interrupted":
            if task.thread_id in self._busy:
                raise ThreadBusy.running(task.thread_id, self._busy[task.thread_id] or task_id)
            raise NotWaitingError(f"task {task_id!r} is not waiting for an answer ({task.status})")
        return task

    async def _launch(self, live: LiveTask, events: AsyncIterator[Event]) -> LiveTask:
        # The run is recorded before its first event. Another server on the same database
        # may hold the thread (the busy set only sees this process): that must be a
        # refusal the client gets (409), not a run that fails in the background.
        try:
            first = await anext(events)
        except ThreadRunning:
            self._busy.pop(live.thread_id, None)
            raise ThreadBusy.running(live.thread_id, await self._run_elsewhere(live)) from None
        except BaseException:
            self._busy.pop(live.thread_id, None)
            raise
        live.task_id = str(first.get("task_id") or live.task_id)
        live.run_id = str(first.get("run_id", ""))
        self._live[live.task_id] = live
        self._busy[live.thread_id] = live.task_id
        live.runner = asyncio.create_task(
            self._drive(live, _after(first, events)), name=f"ducklm-task-{live.task_id}"
        )
        return live

    async def _run_elsewhere(self, live: LiveTask) -> str | None:
        """The task of the thread's run another process has (`None`: not known)."""
        runs = await self._duck.runs(live.thread_id)
        return next((r.task_id for r in reversed(runs) if r.status == "running"), None)

    async def _drive(self, live: LiveTask, events: AsyncIterator[Event]) -> None:
        try:
            async for item in events:
                self._publish(live, item)
        except asyncio.CancelledError:
            if live.taken_over:  # its task goes on elsewhere: an end for followers here only
                live.publish(_ended(live, "interrupted", reason=LEASE_LOST))
            else:  # the runner has recorded the run as cancelled; followers get the same end
                self._publish(live, _ended(live, "cancelled"))
        except Exception:
            log.exception("task %s failed outside its run", live.task_id)
            self._publish(live, _ended(live, "failed"))
        finally:
            self._live.pop(live.task_id, None)
            self._busy.pop(live.thread_id, None)
            live.finish()

    def _publish(self, live: LiveTask, item: Event) -> None:
        """Hand `item` to the task's followers here and, through the relay, elsewhere."""
        live.publish(item)
        if self.relay is not None:
            self.relay.send(live.task_id, key_text(live.keys[-1]), item)


def _ended(live: LiveTask, status: RunStatus, **fields: str) -> Event:
    ids = {"task_id": live.task_id, "thread_id": live.thread_id}
    return event("done", **done_fields(status, **ids, **fields))


async def _after(first: Event, rest: AsyncIterator[Event]) -> AsyncIterator[Event]:
    """`first`, then the events of `rest`."""
    yield first
    async for item in rest:
        yield item
